"""The console's DIO page of a conversation: versions with their changesets and a diff
against the character's original prompt, revert and off (compare-and-set on the version
shown, audited with the operator's account), a submit form; a viewer reads but cannot
write, another tenant's conversation is a 404."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from console.models import AuditEvent
from console.services import ensure_console_user
from roleplay.dio import compiling, selectors
from roleplay.dio.identity import identity_for
from roleplay.dio.models import DioPromptVersion, DioTask
from roleplay.llm.scripted_server import Reply

pytestmark = pytest.mark.django_db


def _client(tenant, role: str) -> Client:
    user, _ = ensure_console_user(tenant, f"u-{role}", f"pw-{role}-123456", role)
    client = Client()
    client.force_login(user)
    return client


def test_the_page_submits_shows_diffs_and_reverts(tenant, operator_user, conversation, llm):
    client = Client()
    client.force_login(operator_user)
    url = f"/console/conversations/{conversation.pk}/dio/"
    assert "No version yet." in client.get(url).content.decode()
    response = client.post(url, {"action": "submit", "instruction": "Answer in short sentences."})
    assert response.status_code == 302
    task = DioTask.objects.get()
    llm.enqueue(Reply(content=json.dumps({
        "compiledPrompt": "A lighthouse keeper.\nShe answers in short sentences.",
        "changeset": [{"op": "add", "text": "short sentences"}],
    })))  # fmt: skip
    compiling.run(str(task.pk))
    page = client.get(url).content.decode()
    assert "Version 1" in page and "short sentences</li>" in page
    assert "+ She answers in short sentences." in page  # the diff against the original
    assert "Answer in short sentences." in page and "succeeded" in page
    stale = client.post(url, {"action": "off", "expected": "0"}, follow=True)
    assert "version 1, not 0" in stale.content.decode()
    client.post(url, {"action": "off", "expected": "1"})
    client.post(url, {"action": "revert", "expected": "2", "version": "1"})
    identity = identity_for(conversation)
    assert [v.kind for v in selectors.versions(None, identity)] == ["revert", "off", "compiled"]
    events = AuditEvent.objects.filter(action="dio.version")
    assert events.count() == 2 and {e.user_id for e in events} == {operator_user.pk}
    bad = client.post(url, {"action": "revert", "expected": "x"}, follow=True)
    assert bad.status_code == 200 and DioPromptVersion.objects.count() == 3


def test_a_viewer_reads_but_cannot_write(tenant, conversation):
    viewer = _client(tenant, "viewer")
    url = f"/console/conversations/{conversation.pk}/dio/"
    assert viewer.get(url).status_code == 200
    assert viewer.post(url, {"action": "submit", "instruction": "x"}).status_code == 403
    assert not DioTask.objects.exists()


def test_another_tenants_conversation_is_not_found(other_tenant, conversation):
    foreign = _client(other_tenant, "operator")
    url = f"/console/conversations/{conversation.pk}/dio/"
    assert foreign.get(url).status_code == 404
    assert foreign.post(url, {"action": "off", "expected": "0"}).status_code == 404
