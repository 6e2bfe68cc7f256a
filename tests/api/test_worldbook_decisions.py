"""A turn's trace keeps the worldbook entries it selected and its near misses; every entry's
decision is selected again on demand from what the trace recorded, and equals what a full
select of the same inputs returns."""

from __future__ import annotations

import pytest

from roleplay.llm.scripted_server import Reply
from tests.api.helpers import assert_error
from worldbook import services
from worldbook.engine.schema import BookIn, SelectRequest
from worldbook.retrieval import select_context

pytestmark = pytest.mark.django_db(transaction=True)

ENTRIES = [
    {"id": "world", "content": "Greyport runs on steam.", "constant": True},
    {"id": "gate", "content": "The gate is shut at night.", "keys": ["gate"]},
    {"id": "tower", "content": "The tower is closed.", "keys": ["tower"]},
    {
        "id": "quest",
        "content": "The quest has begun.",
        "keys": ["gate"],
        "conditions": [{"path": "quest.started", "op": "eq", "value": True}],
    },
    {"id": "sea", "content": "The sea.", "keys": ["sea"], "selective": True,
     "secondary_keys": ["storm"], "logic": "and_all"},
]  # fmt: skip


def _turn(api, conversation, llm) -> dict:
    llm.enqueue(Reply(content="Hm.", chunks=1))
    return api.post(
        f"/api/v1/conversations/{conversation.id}/turns/run",
        {"client_message_id": "c1", "content": "gate"},
        format="json",
    ).json()["turn"]


def _decisions_url(conversation, turn_id, detail=None) -> str:
    url = f"/api/v1/conversations/{conversation.id}/turns/{turn_id}/worldbook-decisions"
    return f"{url}?detail={detail}" if detail else url


@pytest.fixture
def bound(tenant, character):
    books = []
    for n in range(2):
        model = BookIn.model_validate({"name": f"Book {n}", "entries": ENTRIES})
        books.append(services.create_book(tenant, model)[0])
    services.put_bindings(tenant, str(character.id), [{"book_id": str(b.id)} for b in books])
    return books


def test_the_decisions_are_selected_again_and_equal_a_full_select(
    api, tenant, conversation, llm, bound
):
    llm.enqueue(Reply(content="The gate creaks.", chunks=2))
    res = api.post(
        f"/api/v1/conversations/{conversation.id}/turns/run",
        {"client_message_id": "c1", "content": "I walk to the gate by the sea."},
        format="json",
    )
    assert res.status_code == 201, res.content
    turn = res.json()["turn"]
    trace = turn["trace"]["worldbook"]
    assert {s["id"].split(":")[-1] for s in trace["selected"]} >= {"world", "gate"}
    assert {e["entry_id"] for e in trace["excluded"]} >= {"quest"}
    assert "decisions" not in trace  # not every entry's: they are selected again on demand

    replayed = api.get(_decisions_url(conversation, turn["id"]))
    assert replayed.status_code == 200, replayed.content
    body = replayed.json()
    assert body["reproduced"] is True and body["detail"] == "all"
    assert body["selection_fingerprint"] == trace["selection_fingerprint"]
    recorded = trace["replay"]
    full = select_context(
        tenant,
        SelectRequest.model_validate(recorded["request"]),
        record=False,
    )
    assert body["decisions"] == full["decisions"]
    assert len(body["decisions"]) == 2 * len(ENTRIES)

    selected = api.get(_decisions_url(conversation, turn["id"], "selected")).json()
    assert selected["decisions"] == [d for d in full["decisions"] if d["selected"]]
    matched = api.get(_decisions_url(conversation, turn["id"], "matched")).json()
    assert all(d in full["decisions"] for d in matched["decisions"])
    assert "tower" not in {d["entry_id"] for d in matched["decisions"]}


def test_bad_requests_and_foreign_or_unknown_turns(
    api, api_client_for, other_tenant, conversation, llm, bound
):
    turn = _turn(api, conversation, llm)
    assert_error(
        api.get(_decisions_url(conversation, turn["id"], "everything")), 400, "validation_error"
    )
    unknown = api.get(_decisions_url(conversation, turn["id"]) + "?detail=all&extra=1")
    assert_error(unknown, 400, "validation_error")
    for turn_id in ("not-a-uuid", "00000000-0000-0000-0000-000000000000"):
        assert_error(api.get(_decisions_url(conversation, turn_id)), 404, "turn_not_found")
    foreign = api_client_for(other_tenant).get(_decisions_url(conversation, turn["id"]))
    assert_error(foreign, 404, "not_found")


def test_a_turn_without_books_has_no_selection_to_replay(api, conversation, llm):
    turn = _turn(api, conversation, llm)
    assert_error(api.get(_decisions_url(conversation, turn["id"])), 404, "no_worldbook_selection")
