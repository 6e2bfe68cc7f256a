"""The console's Summaries page of a conversation: the checkpoint chain, the newest summary as
the Actor reads it, the transcript with the covered messages marked, and the admin's forms to
edit (a textarea per structured list, one item a line, or the plain text), regenerate and
delete (POST with CSRF, through the service, audited). Another tenant's conversation is a
404; operators and viewers read but do not act."""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings
from django.test import Client

from console.models import AuditAction, AuditEvent
from console.services import ensure_console_user
from roleplay.llm.scripted_server import Reply
from roleplay.models import CompactCheckpoint
from tests.compact.checkpoint_rows import PLAIN, compact_scenario, said, save

pytestmark = pytest.mark.django_db


@pytest.fixture
def scenario(conversation, model_config):
    return compact_scenario(conversation, model_config)


@pytest.fixture
def messages(conversation):
    return said(conversation)


@pytest.fixture
def first(conversation, scenario, messages):
    return save(conversation, scenario, messages)


def signed_in(tenant, role: str, *, csrf: bool = False) -> Client:
    user, _ = ensure_console_user(tenant, f"{role}-{tenant.name}", None, role)
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


@pytest.fixture
def admin(tenant):
    return signed_in(tenant, "admin")


@pytest.fixture
def operator(operator_user):
    client = Client()
    client.force_login(operator_user)
    return client


def page(conversation) -> str:
    return f"/console/conversations/{conversation.pk}/summaries/"


def act(conversation, version) -> str:
    return f"/console/conversations/{conversation.pk}/summaries/{version}/"


def text(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def versions(conversation) -> list[tuple[int, str]]:
    rows = CompactCheckpoint.objects.filter(conversation=conversation).order_by("version")
    return [(row.version, row.status) for row in rows]


def flashed(client, conversation) -> str:
    return text(client.get(page(conversation)))


def test_the_conversation_page_links_to_its_summaries(operator, conversation):
    body = text(operator.get(f"/console/conversations/{conversation.pk}/"))
    assert page(conversation) in body and 'id="conversation-summaries"' in body


def test_without_a_checkpoint_the_page_says_so(admin, conversation, messages):
    body = text(admin.get(page(conversation)))
    assert 'id="summaries-empty"' in body and "summary-edit" not in body


def test_the_page_shows_the_chain_the_summary_and_the_covered_range(
    admin, conversation, scenario, messages, first
):
    save(conversation, scenario, messages, expected=1, covered=2)
    body = text(admin.get(page(conversation)))
    assert 'id="version-1"' in body and 'id="version-2"' in body
    chain = body.split('id="summary-chain"')[1].split("</table>")[0]
    assert chain.index('id="version-2"') < chain.index('id="version-1"')  # newest first
    assert "Canonical facts:" in body and "- The user gave Mira the brass key" in body
    rows = dict(re.findall(r'<tr id="message-([0-9a-f-]+)" class="([^"]*)"', body))
    marked = [("covered" in rows[str(m.id)].split()) for m in messages]
    assert marked == [True, True, False, False, False, False]  # version 2 covers two


def test_an_admin_sees_the_forms_and_an_operator_does_not(admin, operator, conversation, first):
    body = text(admin.get(page(conversation)))
    for form in ("summary-edit", "summary-regenerate", "summary-delete"):
        assert f'id="{form}"' in body
    for name in ("canonical", "interaction", "open_threads"):
        assert f'name="{name}"' in body
    assert 'name="expected_version" value="1"' in body
    assert ">What the key opens.</textarea>" in body
    seen = text(operator.get(page(conversation)))
    assert "summary-edit" not in seen and 'id="summary-admins-only"' in seen


def test_edit_from_the_form_writes_a_new_version(admin, conversation, first):
    form = {"action": "edit", "expected_version": "1", "canonical": "Mira has the key.\n\n Tide ",
            "interaction": "", "open_threads": "the vault\r\n"}  # fmt: skip
    response = admin.post(act(conversation, 1), form)
    assert response.status_code == 302 and response["Location"] == page(conversation)
    saved = CompactCheckpoint.objects.get(conversation=conversation, version=2)
    assert saved.summary == {
        "format": "structured_json",
        "canonical": ["Mira has the key.", "Tide"],
        "interaction": [],
        "open_threads": ["the vault"],
    }
    assert saved.chain == 1 and saved.audit == {"edited_by": "admin-acme"}
    event = AuditEvent.objects.get(action=AuditAction.COMPACT_CHECKPOINT)
    assert event.user.get_username() == "admin-acme" and event.details["action"] == "edit"
    assert "Saved your summary as version 2." in flashed(admin, conversation)


def test_edit_of_plain_text(admin, conversation, scenario, messages):
    save(conversation, scenario, messages, summary=PLAIN)
    assert 'name="text"' in text(admin.get(page(conversation)))
    admin.post(act(conversation, 1), {"action": "edit", "expected_version": "1", "text": "Tea."})
    assert CompactCheckpoint.objects.get(version=2).summary == {
        "format": "plain_text",
        "text": "Tea.",
    }


def test_a_refused_edit_says_why_and_writes_nothing(admin, conversation, first):
    empty = {"action": "edit", "expected_version": "1", "canonical": " ", "interaction": "",
             "open_threads": ""}  # fmt: skip
    assert admin.post(act(conversation, 1), empty).status_code == 302
    assert "the summary is empty" in flashed(admin, conversation)
    stale = {**empty, "canonical": "x", "expected_version": "3"}
    admin.post(act(conversation, 1), stale)
    assert "the newest checkpoint is 1, not 3" in flashed(admin, conversation)
    admin.post(act(conversation, 1), {"action": "nothing", "expected_version": "1"})
    assert "the form was incomplete" in flashed(admin, conversation)
    assert versions(conversation) == [(1, "active")]
    assert not AuditEvent.objects.filter(action=AuditAction.COMPACT_CHECKPOINT).exists()


def test_regenerate_from_the_page(admin, llm, conversation, first):
    answer = {"canonical": ["Mira keeps the key."], "interaction": [], "open_threads": []}
    llm.enqueue(Reply(content=json.dumps(answer)))
    admin.post(act(conversation, 1), {"action": "regenerate", "expected_version": "1"})
    saved = CompactCheckpoint.objects.get(conversation=conversation, version=2)
    assert saved.summary["canonical"] == ["Mira keeps the key."]
    assert saved.audit["regenerated_by"] == "admin-acme"
    assert "FACT-B" in llm.requests[-1]["messages"][1]["content"]
    assert "version 2" in flashed(admin, conversation)


def test_a_failing_compactor_is_shown(admin, llm, conversation, first):
    # refused however it is asked (with a schema, a JSON object, no format: the gateway's
    # fallbacks)
    llm.enqueue(*[Reply(status=400, error_body={"error": {"message": "bad"}})] * 3)
    admin.post(act(conversation, 1), {"action": "regenerate", "expected_version": "1"})
    assert "the compactor failed" in flashed(admin, conversation)
    assert versions(conversation) == [(1, "active")]


def test_delete_from_the_page(admin, conversation, first):
    admin.post(act(conversation, 1), {"action": "delete", "expected_version": "1"})
    assert versions(conversation) == [(1, "invalidated")]
    body = flashed(admin, conversation)
    assert "Version 1 is deleted" in body and "deleted_by_operator" in body
    assert "summary-edit" not in body  # nothing left to act on
    admin.post(act(conversation, 1), {"action": "delete", "expected_version": "1"})
    assert "is invalidated, not active" in flashed(admin, conversation)
    assert AuditEvent.objects.filter(action=AuditAction.COMPACT_CHECKPOINT).count() == 1


def test_only_admins_act(operator, tenant, conversation, first):
    viewer = signed_in(tenant, "viewer")
    for client in (operator, viewer):
        for action in ("edit", "regenerate", "delete"):
            body = {"action": action, "expected_version": "1", "canonical": "x"}
            assert client.post(act(conversation, 1), body).status_code == 403
        assert client.get(page(conversation)).status_code == 200
    assert versions(conversation) == [(1, "active")]


def test_the_forms_need_the_csrf_token(tenant, conversation, first):
    client = signed_in(tenant, "admin", csrf=True)
    body = {"action": "delete", "expected_version": "1"}
    assert client.post(act(conversation, 1), body).status_code == 403
    token = re.search(
        r'name="csrfmiddlewaretoken" value="([^"]+)"', text(client.get(page(conversation)))
    )
    response = client.post(act(conversation, 1), {**body, "csrfmiddlewaretoken": token.group(1)})
    assert response.status_code == 302 and versions(conversation) == [(1, "invalidated")]


def test_another_tenants_conversation_is_404(other_tenant, conversation, first):
    other = signed_in(other_tenant, "admin")
    assert other.get(page(conversation)).status_code == 404
    body = {"action": "delete", "expected_version": "1"}
    assert other.post(act(conversation, 1), body).status_code == 404
    assert versions(conversation) == [(1, "active")]


def test_an_unknown_version_is_404(admin, conversation, first):
    body = {"action": "delete", "expected_version": "2"}
    assert admin.post(act(conversation, 2), body).status_code == 404
    assert admin.post(act(conversation, 9 * 10**12), body).status_code == 404


def test_signed_out_goes_to_sign_in(client, conversation, first):
    response = client.get(page(conversation))
    assert response.status_code == 302 and response["Location"].startswith(settings.LOGIN_URL)


def test_the_page_shows_a_prepared_next_summary_while_a_turn_would_adopt_it(
    admin, conversation, scenario, messages, first
):
    from roleplay.compact.engine import checkpoint as cp
    from roleplay.compact.services import checkpoints as store

    checkpoint = store.as_checkpoint(first)
    ahead = cp.Checkpoint(**{**checkpoint.__dict__, "version": 2, "chain": 1, "covered_count": 6})
    ids = (conversation.tenant_id, conversation.pk, scenario.pk)
    assert store.prepare(*ids, ahead, base=1, audit={"after_turn": "turn-7"})
    html = admin.get(page(conversation)).content.decode()
    assert 'id="summary-prepared"' in html and "turn-7" in html and "extends version 1" in html
    save(conversation, scenario, messages, expected=1, covered=6)  # version 2 came first
    html = admin.get(page(conversation)).content.decode()
    assert 'id="summary-prepared"' not in html  # a turn would no longer adopt it


def test_a_version_restored_after_an_edit_says_so(
    admin, conversation, scenario, messages, django_capture_on_commit_callbacks
):
    from roleplay.conversations.services import messages as message_actions

    save(conversation, scenario, messages, covered=2)
    save(conversation, scenario, messages, expected=1, covered=4)
    with django_capture_on_commit_callbacks(execute=True):
        message_actions.edit_message(conversation, messages[2].id, "FACT-C instead.", editor="p")
    assert versions(conversation) == [(1, "active"), (2, "invalidated"), (3, "active")]
    body = text(admin.get(page(conversation)))
    row = re.search(r'<tr id="version-3">.*?</tr>', body, re.S).group(0)
    assert "version 1 again" in row
