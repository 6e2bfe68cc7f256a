"""The console's Story page of a conversation: the overview, the world and narrative as
tables, revisions with what the Actor saw and a diff of two, events with evidence linked to
the transcript and marked when it changed, and the quarantine review, whose decisions
(admins only, POST with CSRF, a note to resolve) go through the service and are audited.
Another tenant's conversation is a 404; signed out goes to the sign-in page."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from console.models import AuditAction, AuditEvent
from console.services import ensure_console_user
from memory.models import Message
from story.models import StoryHead, StoryQuarantine
from tests.story.story_rows import make_said, make_scenario, make_story, record

pytestmark = pytest.mark.django_db


@pytest.fixture
def scenario(tenant):
    return make_scenario(tenant)


@pytest.fixture
def said(conversation):
    return make_said(conversation)


@pytest.fixture
def story(conversation, scenario, said):
    return make_story(conversation, scenario, said)


TABS = ("overview", "world", "narrative", "revisions", "events", "quarantine")


def signed_in(tenant, role: str, *, csrf: bool = False) -> Client:
    user, _ = ensure_console_user(tenant, f"{role}-{tenant.name}", None, role)
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


@pytest.fixture
def operator(tenant, operator_user):
    client = Client()
    client.force_login(operator_user)
    return client


@pytest.fixture
def admin(tenant):
    return signed_in(tenant, "admin")


def page(conversation, tab: str = "") -> str:
    query = f"?tab={tab}" if tab else ""
    return f"/console/conversations/{conversation.pk}/story/{query}"


def decide_url(conversation, qid) -> str:
    return f"/console/conversations/{conversation.pk}/story/quarantine/{qid}/"


def text(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def test_the_conversation_page_links_to_its_story(operator, conversation):
    body = text(operator.get(f"/console/conversations/{conversation.pk}/"))
    assert page(conversation) in body


def test_without_a_story_the_page_says_so(operator, conversation):
    body = text(operator.get(page(conversation)))
    assert 'id="story-empty"' in body and "story-tabs" not in body


def test_every_tab_renders_for_the_operator_and_a_viewer(operator, tenant, conversation, story):
    viewer = signed_in(tenant, "viewer")
    for client in (operator, viewer):
        for tab in (*TABS, "nonsense"):
            body = text(client.get(page(conversation, tab)))
            assert 'id="story-revision">2<' in body, tab


def test_the_overview_shows_the_current_event(operator, conversation, story):
    body = text(operator.get(page(conversation)))
    assert "at the gate" in body and 'id="story-event"' in body
    assert "No prepared turn waits" in body
    assert "1 open" in body  # the quarantine tab's badge


def test_world_and_narrative_are_tables(operator, conversation, story):
    world = text(operator.get(page(conversation, "world")))
    assert 'id="story-backgrounds"' in world and "the patrol" in world
    assert 'id="story-undercurrents"' in world and "a spy" in world
    assert "Open the gate" in world and 'id="story-world-json"' in world
    narrative = text(operator.get(page(conversation, "narrative")))
    assert 'id="story-lines"' in narrative and "find the key" in narrative
    assert 'id="story-goals"' in narrative and "the crest" in narrative
    assert 'id="story-emotion"' in narrative and "valence" in narrative


def test_revisions_show_what_the_actor_saw_and_a_diff(operator, conversation, story):
    body = text(operator.get(page(conversation, "revisions")))
    assert 'id="revision-1"' in body and 'id="revision-2"' in body
    assert "What the Actor saw" in body and "The Actor was not called" in body
    diff = text(operator.get(page(conversation, "revisions") + "&from=1&to=2"))
    assert 'id="story-diff-lines"' in diff
    assert 'diff-line del">-' in diff and "the gate" in diff
    assert 'diff-line add">+' in diff and "inside" in diff
    missing = text(operator.get(page(conversation, "revisions") + "&from=1&to=99"))
    assert 'id="story-diff-error"' in missing


def test_events_link_evidence_and_mark_what_changed(operator, conversation, story, said):
    body = text(operator.get(page(conversation, "events")))
    assert f"/console/conversations/{conversation.pk}/#message-{said.id}" in body
    assert "evidence-changed" not in body
    Message.objects.filter(pk=said.pk).update(content="I hide the key.")
    body = text(operator.get(page(conversation, "events")))
    assert "evidence-changed" in body


def test_only_admins_see_the_decision_forms(operator, admin, conversation, story):
    qid = record(conversation).pk
    assert decide_url(conversation, qid) not in text(operator.get(page(conversation, "quarantine")))
    assert decide_url(conversation, qid) in text(admin.get(page(conversation, "quarantine")))


@pytest.mark.parametrize(
    ("decision", "status"),
    [("retry", "retried"), ("discard", "discarded"), ("resolve", "resolved")],
)
def test_an_admin_decides_by_the_form(admin, conversation, story, decision, status):
    qid = record(conversation).pk
    response = admin.post(decide_url(conversation, qid), {"decision": decision, "note": "checked"})
    assert response.status_code == 302 and response["Location"].endswith("?tab=quarantine")
    assert record(conversation).status == status
    assert StoryHead.objects.get(conversation=conversation).revision == 3
    audit = AuditEvent.objects.get(action=AuditAction.STORY_QUARANTINE)
    assert audit.username.startswith("admin-") and audit.details["decision"] == decision
    body = text(admin.get(page(conversation, "quarantine")))
    assert "checked" in body and status in body


def test_resolving_needs_a_note_and_deciding_twice_says_so(admin, conversation, story):
    qid = record(conversation).pk
    response = admin.post(decide_url(conversation, qid), {"decision": "resolve"}, follow=True)
    assert "needs an operator note" in text(response)
    assert record(conversation).status == "open"
    admin.post(decide_url(conversation, qid), {"decision": "discard"})
    response = admin.post(decide_url(conversation, qid), {"decision": "retry"}, follow=True)
    assert "already discarded" in text(response)
    response = admin.post(decide_url(conversation, qid), {"decision": "bogus"}, follow=True)
    assert "choose retry, discard or resolve" in text(response)
    assert AuditEvent.objects.filter(action=AuditAction.STORY_QUARANTINE).count() == 1


def test_the_form_needs_its_csrf_token(tenant, conversation, story):
    client = signed_in(tenant, "admin", csrf=True)
    qid = record(conversation).pk
    assert client.post(decide_url(conversation, qid), {"decision": "retry"}).status_code == 403
    assert record(conversation).status == "open"


def test_operators_and_viewers_cannot_decide(operator, tenant, conversation, story):
    qid = record(conversation).pk
    for client in (operator, signed_in(tenant, "viewer")):
        response = client.post(decide_url(conversation, qid), {"decision": "discard"})
        assert response.status_code == 403
    assert record(conversation).status == "open"


def test_another_tenants_story_is_not_found(other_tenant, conversation, story):
    theirs = signed_in(other_tenant, "admin")
    qid = record(conversation).pk
    for tab in TABS:
        assert theirs.get(page(conversation, tab)).status_code == 404
    response = theirs.post(decide_url(conversation, qid), {"decision": "discard"})
    assert response.status_code == 404
    assert StoryQuarantine.objects.get(pk=qid).status == "open"


def test_an_unknown_record_is_not_found(admin, conversation, story):
    import uuid

    response = admin.post(decide_url(conversation, uuid.uuid4()), {"decision": "discard"})
    assert response.status_code == 404


def test_signed_out_goes_to_sign_in(client, conversation, story):
    qid = record(conversation).pk
    for response in (
        client.get(page(conversation)),
        client.post(decide_url(conversation, qid), {"decision": "discard"}),
    ):
        assert response.status_code == 302
        assert response["Location"].startswith(f"{settings.LOGIN_URL}?next=")
    assert record(conversation).status == "open"
