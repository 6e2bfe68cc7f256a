"""``/api/v1/conversations/{id}/story``: the story in force by the parts of its envelope, its
revisions, its events (evidence marked when its message changed) and the quarantine
decisions (admin scope, a note to resolve, audited); another tenant's conversation is a 404
on every route and a conversation without a story answers revision 0."""

from __future__ import annotations

import uuid

import pytest

from console.models import AuditAction, AuditEvent
from memory.models import Message
from story.models import StoryEvent, StoryHead, StoryRevision
from tests.api.helpers import assert_error
from tests.story.story_rows import envelope, make_said, make_scenario, make_story, record, write

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


def url(conversation, tail: str = "") -> str:
    return f"/api/v1/conversations/{conversation.pk}/story{tail}"


def test_the_story_answers_its_envelope_by_parts(api, conversation, scenario, story):
    body = api.get(url(conversation)).json()
    assert set(body) == {"conversation", "scenario", "revision", "status", "world", "narrative",
                         "pending", "event", "unresolved", "updated_at"}  # fmt: skip
    assert body["conversation"] == str(conversation.pk)
    assert body["scenario"] == str(scenario.pk)
    assert (body["revision"], body["status"]) == (2, "ready")
    assert body["world"]["foreground"]["title"] == "inside"
    assert body["narrative"]["cycle"]["pending"][0]["id"] == "g1"
    assert body["event"]["id"] == "e2" and body["unresolved"] == []
    assert body["pending"] is None  # revision 2 waits for no Actor


def test_pending_leaves_the_prepared_payload_out(api, conversation, scenario, said):
    pending = {"messageId": "m", "userMessageId": str(said.id), "sourcePosition": 1,
               "stage": {"x": 1}, "prepared": {"secret": 1}}  # fmt: skip
    unresolved = [{"id": "e1", "title": "t", "evidence": [], "attempts": [], "interrupted": True}]
    write(conversation, scenario, 0, envelope(conversation, pending=pending, unresolved=unresolved))
    body = api.get(url(conversation)).json()
    assert body["pending"] == {key: v for key, v in pending.items() if key != "prepared"}
    assert body["unresolved"] == unresolved


def test_a_conversation_without_a_story_answers_revision_0(api, conversation):
    body = api.get(url(conversation)).json()
    assert body == {"conversation": str(conversation.pk), "scenario": None, "revision": 0,
                    "status": "none", "world": None, "narrative": None, "pending": None,
                    "event": None, "unresolved": [], "updated_at": None}  # fmt: skip
    for tail in ("/revisions/", "/events/", "/quarantine/"):
        page = api.get(url(conversation, tail)).json()
        assert (page["count"], page["results"]) == (0, []), tail
    assert_error(api.get(url(conversation, "/revisions/1/")), 404, "not_found")


def test_revisions_are_listed_newest_first_and_paginated(api, conversation, story, said):
    page = api.get(url(conversation, "/revisions/")).json()
    assert page["count"] == 2 and [r["revision"] for r in page["results"]] == [2, 1]
    first = page["results"][1]
    assert set(first) == {"revision", "status", "outcome", "source_position", "turn_id",
                          "message_id", "created_at"}  # fmt: skip
    assert (first["outcome"], first["source_position"]) == ("prepared", 1)
    assert first["message_id"] == str(said.id)
    one = api.get(url(conversation, "/revisions/?limit=1&offset=1")).json()
    assert one["count"] == 2 and [r["revision"] for r in one["results"]] == [1]
    assert one["previous"] is not None


def test_a_revision_in_full_has_its_envelope_and_what_the_actor_saw(api, conversation, story):
    body = api.get(url(conversation, "/revisions/1/")).json()
    assert body["revision"] == 1
    assert body["envelope"]["world"]["foreground"]["title"] == "the gate"
    assert body["stage"]["stage"]["event"]["title"] == "the gate"
    assert api.get(url(conversation, "/revisions/2")).json()["stage"] is None
    for missing in ("3", "0", "9" * 30):
        assert_error(api.get(url(conversation, f"/revisions/{missing}/")), 404, "not_found")


def test_events_mark_evidence_whose_message_changed(api, conversation, story, said):
    [event] = api.get(url(conversation, "/events/")).json()["results"]
    assert (event["event_id"], event["title"], event["status"]) == ("e1", "the key", "quarantined")
    assert event["revision"] == 2 and len(event["attempts"]) == 3
    [piece] = event["evidence"]
    assert piece["message_id"] == str(said.id) and piece["changed"] is False
    assert (piece["kind"], piece["source_position"]) == ("user_action", 1)
    Message.objects.filter(pk=said.pk).update(content="I hide the key.")
    [event] = api.get(url(conversation, "/events/")).json()["results"]
    assert event["evidence"][0]["changed"] is True
    Message.objects.filter(pk=said.pk).delete()
    [event] = api.get(url(conversation, "/events/")).json()["results"]
    assert event["evidence"][0]["changed"] is True


def test_quarantine_lists_the_records(api, conversation, story):
    [row] = api.get(url(conversation, "/quarantine/")).json()["results"]
    assert (row["event_id"], row["status"], row["revision"]) == ("e1", "open", 2)
    assert row["record"]["reason"] == "attempts" and row["decided_at"] is None


def test_retry_puts_the_event_back_in_the_queue_and_is_audited(api, conversation, story):
    qid = record(conversation).pk
    response = api.post(url(conversation, f"/quarantine/{qid}/retry"), {}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "retried" and body["decided_by"].startswith("api token test")
    head = StoryHead.objects.get(conversation=conversation)
    assert head.revision == 3 and [e["id"] for e in head.envelope["unresolved"]] == ["e1"]
    assert StoryEvent.objects.get(conversation=conversation).status == "unknown"
    assert StoryRevision.objects.filter(conversation=conversation, revision=3).exists()
    audit = AuditEvent.objects.get(action=AuditAction.STORY_QUARANTINE)
    assert audit.tenant_id == conversation.tenant_id
    assert audit.details == {"conversation": str(conversation.pk), "event_id": "e1",
                             "decision": "retry"}  # fmt: skip


def test_discard_drops_the_event(api, conversation, story):
    qid = record(conversation).pk
    body = api.post(url(conversation, f"/quarantine/{qid}/discard/"), {}, format="json").json()
    assert body["status"] == "discarded"
    assert StoryEvent.objects.get(conversation=conversation).status == "discarded"
    assert AuditEvent.objects.get(action=AuditAction.STORY_QUARANTINE).details["decision"] == (
        "discard"
    )


def test_resolve_needs_a_note(api, conversation, story):
    qid = record(conversation).pk
    path = url(conversation, f"/quarantine/{qid}/resolve")
    for body in ({}, {"note": ""}, {"note": "   "}):
        assert_error(api.post(path, body, format="json"), 422, "note_required")
    assert record(conversation).status == "open"
    assert not AuditEvent.objects.filter(action=AuditAction.STORY_QUARANTINE).exists()
    assert StoryHead.objects.get(conversation=conversation).revision == 2
    body = api.post(path, {"note": "settled by hand"}, format="json").json()
    assert (body["status"], body["note"]) == ("resolved", "settled by hand")
    head = StoryHead.objects.get(conversation=conversation)
    assert "e1" in head.envelope["narrative"]["clock"]["settledEvents"]


def test_a_decided_record_is_a_409(api, conversation, story):
    qid = record(conversation).pk
    response = api.post(url(conversation, f"/quarantine/{qid}/discard"), {}, format="json")
    assert response.status_code == 200
    for decision, body in (("retry", {}), ("discard", {}), ("resolve", {"note": "n"})):
        response = api.post(url(conversation, f"/quarantine/{qid}/{decision}"), body, format="json")
        assert_error(response, 409, "quarantine_decided")
    assert AuditEvent.objects.filter(action=AuditAction.STORY_QUARANTINE).count() == 1


def test_bad_bodies_and_unknown_records(api, conversation, story):
    qid = record(conversation).pk
    path = url(conversation, f"/quarantine/{qid}/retry")
    assert_error(api.post(path, {"surprise": 1}, format="json"), 400, "validation_error")
    assert_error(api.post(path, {"note": 5}, format="json"), 400, "validation_error")
    assert_error(api.post(path, {"note": "x" * 2001}, format="json"), 400, "validation_error")
    for unknown in (uuid.uuid4(), "not-a-uuid"):
        response = api.post(url(conversation, f"/quarantine/{unknown}/retry"), {}, format="json")
        assert_error(response, 404, "not_found")
    assert record(conversation).status == "open"


def test_the_quarantine_needs_the_admin_scope(api_client_for, tenant, conversation, story):
    qid = record(conversation).pk
    for scope in ("content", "play"):
        client = api_client_for(tenant, [scope])
        assert_error(client.get(url(conversation, "/quarantine/")), 403, "forbidden")
        response = client.post(url(conversation, f"/quarantine/{qid}/retry"), {}, format="json")
        assert_error(response, 403, "forbidden")
    assert record(conversation).status == "open"
    # The story's reads follow the conversation's scope.
    assert api_client_for(tenant, ["play"]).get(url(conversation)).status_code == 200


def test_another_tenants_conversation_is_404_on_every_route(
    api_client_for, other_tenant, conversation, story
):
    theirs = api_client_for(other_tenant)
    qid = record(conversation).pk
    reads = ("", "/", "/revisions/", "/revisions/1/", "/events/", "/quarantine/")
    for tail in reads:
        assert_error(theirs.get(url(conversation, tail)), 404, "not_found")
    for decision, body in (("retry", {}), ("discard", {}), ("resolve", {"note": "n"})):
        response = theirs.post(
            url(conversation, f"/quarantine/{qid}/{decision}"), body, format="json"
        )
        assert_error(response, 404, "not_found")
    assert record(conversation).status == "open"
    assert StoryHead.objects.get(conversation=conversation).revision == 2
