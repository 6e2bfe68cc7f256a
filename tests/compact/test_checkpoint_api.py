"""``/api/v1/conversations/{id}/checkpoints/``: every version of the conversation's Compact
checkpoint, newest first, and one of them; an operator's edit, regeneration (the scripted
compactor, over the covered messages) and deletion of the newest active version, each by
compare-and-set on ``expected_version``, audited, admin scope only. Another tenant's
conversation is a 404 on every route."""

from __future__ import annotations

import json

import pytest

from console.models import AuditAction, AuditEvent
from memory.models import Message
from roleplay.compact.services import checkpoints as store
from roleplay.llm.scripted_server import Reply
from roleplay.models import CompactCheckpoint, ModelCall
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff
from tests.compact.checkpoint_rows import PLAIN, STRUCTURED, compact_scenario, said, save

pytestmark = pytest.mark.django_db

SUMMARY = {"canonical": ["Mira holds the key."], "interaction": ["trust"], "open_threads": []}


@pytest.fixture
def scenario(conversation, model_config):
    return compact_scenario(conversation, model_config, maxSummaryTokens=60)


@pytest.fixture
def messages(conversation):
    return said(conversation)


@pytest.fixture
def first(conversation, scenario, messages):
    return save(conversation, scenario, messages)


def url(conversation, tail: str = "") -> str:
    return f"/api/v1/conversations/{conversation.pk}/checkpoints{tail}"


def post(api, conversation, version, verb: str, body: dict):
    return api.post(url(conversation, f"/{version}/{verb}"), body, format="json")


def versions(conversation) -> list[tuple[int, str]]:
    rows = CompactCheckpoint.objects.filter(conversation=conversation).order_by("version")
    return [(row.version, row.status) for row in rows]


def audits() -> list[dict]:
    return [e.details for e in AuditEvent.objects.filter(action=AuditAction.COMPACT_CHECKPOINT)]


def test_versions_are_listed_newest_first_with_their_range(api, conversation, scenario, messages):
    save(conversation, scenario, messages)
    save(conversation, scenario, messages, expected=1, covered=6)
    page = api.get(url(conversation, "/")).json()
    assert page["count"] == 2 and [r["version"] for r in page["results"]] == [2, 1]
    newest, oldest = page["results"]
    assert set(newest) == {"version", "chain", "status", "reason", "summary", "scenario",
                           "first_message_id", "last_message_id", "covered_count",
                           "created_at", "audit"}  # fmt: skip
    assert (newest["chain"], oldest["chain"]) == (1, None)
    assert (newest["status"], newest["reason"]) == ("active", "")
    assert newest["summary"] == STRUCTURED and newest["scenario"] == str(scenario.pk)
    assert oldest["first_message_id"] == str(messages[0].id)
    assert oldest["last_message_id"] == str(messages[3].id) and oldest["covered_count"] == 4
    assert newest["covered_count"] == 6 and newest["audit"]["turn_id"] == "t-1"
    one = api.get(url(conversation, "/?limit=1&offset=1")).json()
    assert [r["version"] for r in one["results"]] == [1] and one["previous"] is not None


def test_one_version_in_full(api, conversation, first):
    body = api.get(url(conversation, "/1/")).json()
    assert body["version"] == 1 and body["summary"] == STRUCTURED
    assert api.get(url(conversation, "/1")).status_code == 200
    for missing in ("2", "0", "-1", "x", "9" * 30):
        assert_error(api.get(url(conversation, f"/{missing}/")), 404, "not_found")


def test_a_conversation_without_checkpoints_lists_none(api, conversation):
    page = api.get(url(conversation, "/")).json()
    assert (page["count"], page["results"]) == (0, [])
    assert_error(api.get(url(conversation, "/1/")), 404, "not_found")
    assert_error(post(api, conversation, 1, "delete", {"expected_version": 1}), 404, "not_found")


def test_edit_writes_a_new_version_over_the_same_messages(api, conversation, first):
    summary = {"format": "structured_json", "canonical": ["  Mira keeps the key. ", " "],
               "interaction": [], "open_threads": ["the vault"]}  # fmt: skip
    response = post(api, conversation, 1, "edit", {"summary": summary, "expected_version": 1})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["version"], body["chain"], body["status"]) == (2, 1, "active")
    assert body["summary"] == {"format": "structured_json", "canonical": ["Mira keeps the key."],
                               "interaction": [], "open_threads": ["the vault"]}  # fmt: skip
    assert body["audit"] == {"edited_by": body["audit"]["edited_by"]}
    assert body["audit"]["edited_by"].startswith("api token test")
    edited = CompactCheckpoint.objects.get(conversation=conversation, version=2)
    first.refresh_from_db()
    for field in ("first_message_id", "last_message_id", "covered_count", "fingerprint",
                  "config_fingerprint", "format_version", "scenario_id"):  # fmt: skip
        assert getattr(edited, field) == getattr(first, field), field
    assert versions(conversation) == [(1, "active"), (2, "active")]  # every version is kept
    assert audits() == [{"conversation": str(conversation.pk), "scenario": str(first.scenario_id),
                         "action": "edit", "version": 1, "new_version": 2}]  # fmt: skip
    assert AuditEvent.objects.get().tenant_id == conversation.tenant_id


def test_edit_of_a_plain_text_checkpoint(api, conversation, scenario, messages):
    save(conversation, scenario, messages, summary=PLAIN)
    body = {"summary": {"text": " The key hangs by the lamp. "}, "expected_version": 1}
    saved = post(api, conversation, 1, "edit", body).json()
    assert saved["summary"] == {"format": "plain_text", "text": "The key hangs by the lamp."}
    wrong = {"summary": {"format": "structured_json", **SUMMARY}, "expected_version": 2}
    error = assert_error(post(api, conversation, 2, "edit", wrong), 422, "validation_error")
    assert error["details"]["field"] == "summary.format"


def test_a_stale_edit_is_a_conflict_and_writes_nothing(api, conversation, scenario, first):
    body = {"summary": {"format": "structured_json", **SUMMARY}, "expected_version": 2}
    before = db_snapshot()
    error = assert_error(
        post(api, conversation, 1, "edit", body), 409, "checkpoint_version_conflict"
    )
    assert error["details"] == {"current_version": 1, "expected_version": 2}
    assert snapshot_diff(before, db_snapshot()) == []
    assert post(api, conversation, 1, "edit", {**body, "expected_version": 1}).status_code == 200
    # version 1 is no longer the newest: editing it again is refused, whatever was expected
    for expected in (1, 2):
        error = assert_error(
            post(api, conversation, 1, "edit", {**body, "expected_version": expected}),
            409,
            "checkpoint_version_conflict",
        )
        assert error["details"]["current_version"] == 2
    assert versions(conversation) == [(1, "active"), (2, "active")]


@pytest.mark.parametrize(
    ("summary", "field"),
    [
        ("text", "summary"),
        ({"format": "plain_text", "text": "x"}, "summary.format"),
        ({"canonical": ["a"], "interaction": []}, "summary.open_threads"),
        ({**SUMMARY, "canonical": "a fact"}, "summary.canonical"),
        ({**SUMMARY, "interaction": [1]}, "summary.interaction"),
        ({**SUMMARY, "mood": []}, "summary.mood"),
        ({"canonical": [" "], "interaction": [], "open_threads": [""]}, "summary"),
        ({**SUMMARY, "canonical": ["nul \x00 byte"]}, "summary.canonical"),
        ({**SUMMARY, "canonical": ["the tide rolls over the stones"] * 20}, "summary"),
    ],
    ids=["not-object", "format", "missing-list", "not-list", "not-strings", "unknown", "empty",
         "nul", "over-size"],
)  # fmt: skip
def test_a_bad_summary_is_422_naming_the_field(api, conversation, first, summary, field):
    before = db_snapshot()
    response = post(api, conversation, 1, "edit", {"summary": summary, "expected_version": 1})
    if field == "summary" and not isinstance(summary, dict):
        assert_error(response, 400, "validation_error")  # the body's own type check
    else:
        error = assert_error(response, 422, "validation_error")
        assert error["details"]["field"] == field, error
        assert error["details"]["errors"][0]["loc"] == field
    assert snapshot_diff(before, db_snapshot()) == []


def test_the_body_is_checked(api, conversation, first):
    path = url(conversation, "/1/edit")
    for body in ({}, {"summary": SUMMARY}, {"summary": SUMMARY, "expected_version": 0},
                 {"summary": SUMMARY, "expected_version": 1, "extra": 1}):  # fmt: skip
        assert_error(api.post(path, body, format="json"), 400, "validation_error")
    for verb in ("regenerate", "delete"):
        for body in ({}, {"expected_version": "one"}, {"expected_version": 1, "why": "x"}):
            assert_error(post(api, conversation, 1, verb, body), 400, "validation_error")
    assert versions(conversation) == [(1, "active")]


def test_delete_invalidates_the_newest_version(api, conversation, scenario, first):
    response = post(api, conversation, 1, "delete", {"expected_version": 1})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["version"], body["status"], body["reason"]) == (
        1,
        "invalidated",
        "deleted_by_operator",
    )
    assert store.newest(conversation.pk, scenario.pk).status == "invalidated"
    assert audits()[0]["action"] == "delete"
    again = post(api, conversation, 1, "delete", {"expected_version": 1})
    assert_error(again, 409, "checkpoint_version_conflict")
    edit = {"summary": {"format": "structured_json", **SUMMARY}, "expected_version": 1}
    assert_error(post(api, conversation, 1, "edit", edit), 409, "checkpoint_version_conflict")
    assert_error(
        post(api, conversation, 1, "regenerate", {"expected_version": 1}),
        409,
        "checkpoint_version_conflict",
    )
    assert versions(conversation) == [(1, "invalidated")] and len(audits()) == 1


def test_delete_of_an_older_version_is_a_conflict(api, conversation, scenario, messages, first):
    save(conversation, scenario, messages, expected=1)
    for expected in (1, 2):
        assert_error(
            post(api, conversation, 1, "delete", {"expected_version": expected}),
            409,
            "checkpoint_version_conflict",
        )
    assert versions(conversation) == [(1, "active"), (2, "active")]


def test_regenerate_asks_the_compactor_over_the_covered_messages(api, llm, conversation, first):
    llm.enqueue(Reply(content=json.dumps(SUMMARY)))
    response = post(api, conversation, 1, "regenerate", {"expected_version": 1})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["version"], body["chain"]) == (2, 1)
    assert body["summary"] == {"format": "structured_json", **SUMMARY}
    assert body["audit"]["regenerated_by"].startswith("api token test")
    [request] = llm.requests
    system, user = (m["content"] for m in request["messages"])
    assert "You compress the older part" in system and "Mira" in system
    sent = json.loads(user)  # harness_json_v1
    assert [m["text"] for m in sent["messages"]] == [m.content for m in said_texts(conversation)]
    assert [m["speaker"] for m in sent["messages"]] == ["Ann", "Mira", "Ann", "Mira"]
    assert sent["earlier_summary"] is None and sent["latest_user_message_context_only"] is None
    assert request["response_format"]["type"] == "json_schema"
    call = ModelCall.objects.get(purpose="compactor")
    assert body["audit"]["model_calls"] == [str(call.pk)]
    saved = CompactCheckpoint.objects.get(conversation=conversation, version=2)
    assert (saved.covered_count, saved.fingerprint) == (first.covered_count, first.fingerprint)
    assert audits()[0]["action"] == "regenerate"


def said_texts(conversation):
    rows = Message.objects.filter(session_id=conversation.session_id).order_by("ts")
    return list(rows)[:4]


def test_regenerate_of_a_plain_text_checkpoint(api, llm, conversation, scenario, messages):
    scenario.compact = {**scenario.compact, "outputFormat": "plain_text",
                        "inputProtocol": "dream_text_v0"}  # fmt: skip
    scenario.save(update_fields=["compact"])
    save(conversation, scenario, messages, summary=PLAIN)
    llm.enqueue(Reply(content="Mira keeps the brass key by the lamp."))
    body = post(api, conversation, 1, "regenerate", {"expected_version": 1}).json()
    assert body["summary"] == {
        "format": "plain_text",
        "text": "Mira keeps the brass key by the lamp.",
    }
    user = llm.requests[-1]["messages"][1]["content"]
    assert "MESSAGES TO FOLD IN" in user and "FACT-B" in user and "What now?" not in user


def test_a_failing_compactor_is_a_502_with_its_code(api, llm, conversation, first):
    # refused however it is asked (with a schema, a JSON object, no format: the gateway's
    # fallbacks)
    llm.enqueue(*[Reply(status=400, error_body={"error": {"message": "bad"}})] * 3)
    before = CompactCheckpoint.objects.count()
    response = post(api, conversation, 1, "regenerate", {"expected_version": 1})
    assert_error(response, 502, "model_bad_request")
    assert CompactCheckpoint.objects.count() == before and audits() == []


def test_an_invalid_summary_is_a_502(api, llm, conversation, first):
    llm.enqueue(Reply(content="not a summary"), Reply(content='{"canonical": []}'))
    response = post(api, conversation, 1, "regenerate", {"expected_version": 1})
    assert_error(response, 502, "compact_summary_invalid")
    assert len(llm.requests) == 2  # maxModelCalls: the refused answer was told why
    assert "Refused" in llm.requests[1]["messages"][-1]["content"]
    assert versions(conversation) == [(1, "active")]


def test_regenerate_needs_the_covered_messages(api, llm, conversation, messages, first):
    Message.objects.filter(pk=messages[1].pk).delete()
    response = post(api, conversation, 1, "regenerate", {"expected_version": 1})
    assert_error(response, 409, "checkpoint_history_changed")
    Message.objects.filter(pk=messages[3].pk).update(archived=True)
    assert_error(
        post(api, conversation, 1, "regenerate", {"expected_version": 1}),
        409,
        "checkpoint_history_changed",
    )
    assert llm.requests == [] and versions(conversation) == [(1, "active")]


def test_regenerate_needs_a_compactor(api, conversation, scenario, first):
    scenario.compact = {}
    scenario.save(update_fields=["compact"])
    assert_error(
        post(api, conversation, 1, "regenerate", {"expected_version": 1}),
        422,
        "compact_not_configured",
    )


def test_another_tenants_conversation_is_404_on_every_route(
    api_client_for, other_tenant, conversation, first
):
    other = api_client_for(other_tenant)
    before = db_snapshot()
    assert_error(other.get(url(conversation, "/")), 404, "not_found")
    assert_error(other.get(url(conversation, "/1/")), 404, "not_found")
    edit = {"summary": {"format": "structured_json", **SUMMARY}, "expected_version": 1}
    for verb, body in (("edit", edit), ("regenerate", {"expected_version": 1}),
                       ("delete", {"expected_version": 1})):  # fmt: skip
        assert_error(post(other, conversation, 1, verb, body), 404, "not_found")
        assert_error(post(other, conversation, 1, verb, {}), 404, "not_found")
    assert snapshot_diff(before, db_snapshot()) == []


def test_writes_need_the_admin_scope(api_client_for, tenant, conversation, first):
    edit = {"summary": {"format": "structured_json", **SUMMARY}, "expected_version": 1}
    for scope in ("play", "content"):
        client = api_client_for(tenant, [scope])
        for verb, body in (("edit", edit), ("regenerate", {"expected_version": 1}),
                           ("delete", {"expected_version": 1})):  # fmt: skip
            assert_error(post(client, conversation, 1, verb, body), 403, "forbidden")
    play = api_client_for(tenant, ["play"])  # reads are the conversation's scope
    assert play.get(url(conversation, "/")).json()["count"] == 1
    assert play.get(url(conversation, "/1/")).status_code == 200
    assert versions(conversation) == [(1, "active")] and audits() == []
