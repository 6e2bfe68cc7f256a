"""Seed 000's minimum acceptance test, end to end at the scripted model server: the Actor
reads the old value with ``get_memory``, changes it with ``update_memory`` and gets the
receipt; the next request really carries the new value in the model input. Plus a version
conflict and a failed save (refused by a ``beforeUpdate`` hook) that leave nothing written,
and the scope that comes from the turn, never from the arguments."""

from __future__ import annotations

import json

import pytest

from memory.documents import tools as document_tools
from memory.documents.selectors import document_history, read_document
from memory.documents.services import put_document
from memory.errors import MemoryInvalid
from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn

pytestmark = pytest.mark.django_db(transaction=True)


def _call(name, **arguments):
    return Reply(tool_calls=[{"name": name, "arguments": arguments}])


def _turn(api, conversation, n: int, text: str = "Go on."):
    res = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": f"m{n}", "content": text},
        format="json",
    )
    assert res.status_code == 201, res.content
    return Turn.objects.filter(conversation=conversation).order_by("-started_at").first()


def _tool_results(request) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def _model_input(request) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


@pytest.fixture
def tools_on(api, character):
    response = api.put(
        f"/api/v1/characters/{character.pk}/memory-settings/",
        {"document_tools": True},
        format="json",
    )
    assert response.status_code == 200, response.content


def test_read_change_receipt_and_the_next_request_carries_the_new_value(
    api, tenant, conversation, llm, tools_on
):
    session = conversation.session_id
    put_document(
        tenant, session, "default", 0, {"scene": "city gate", "keyHolder": "user"}, origin="api"
    )
    new = {"scene": "city gate", "keyHolder": "guard"}
    llm.enqueue(
        _call("get_memory"),
        _call("update_memory", expectedRevision=1, memory=new),
        Reply(content="The guard takes the key."),
    )
    turn = _turn(api, conversation, 1, "I hand the key to the guard.")
    first, second, third = llm.requests[-3:]
    assert [t["function"]["name"] for t in first["tools"]] == ["get_memory", "update_memory"]
    assert _tool_results(second) == [
        {"revision": 1, "memory": {"scene": "city gate", "keyHolder": "user"}}
    ]
    assert _tool_results(third)[-1] == {"revision": 2}  # the receipt: old + 1
    assert third.get("tool_choice") in (None, "auto")
    assert read_document(tenant, session, "default") == {"revision": 2, "memory": new}
    assert turn.trace["memory_tools"] == [
        {"tool": "get_memory", "outcome": {"revision": 1}},
        {"tool": "update_memory", "outcome": {"revision": 2}},
    ]
    assert document_history(tenant, session, "default", 5)[0]["origin"] == "tool"

    llm.enqueue(Reply(content="The gate is quiet."))
    _turn(api, conversation, 2, "What now?")
    sent = _model_input(llm.requests[-1])
    assert '"keyHolder": "guard"' in sent and "revision 2" in sent


def test_a_conflict_and_a_refused_save_write_nothing(api, tenant, conversation, llm, tools_on):
    session = conversation.session_id
    put_document(tenant, session, "default", 0, {"scene": "gate"}, origin="api")
    put_document(tenant, session, "default", 1, {"scene": "bridge"}, origin="api")

    def needs_scene(_tenant, _session, _slot, memory):
        if not isinstance(memory.get("scene"), str):
            raise MemoryInvalid("scene_required", "scene is required")

    document_tools.BEFORE_UPDATE.append(needs_scene)
    try:
        llm.enqueue(
            _call("update_memory", expectedRevision=1, memory={"scene": "stale"}),
            _call("update_memory", expectedRevision=2, memory={"keyHolder": "guard"}),
            _call("update_memory", expectedRevision=2, memory={"scene": "x"}, tenant="other"),
            Reply(content="Nothing changed."),
        )
        turn = _turn(api, conversation, 1)
    finally:
        document_tools.BEFORE_UPDATE.remove(needs_scene)
    results = _tool_results(llm.requests[-1])
    assert results[0]["error"]["code"] == "revision_conflict"
    assert results[0]["error"]["details"]["current_revision"] == 2
    assert results[1]["error"]["code"] == "scene_required"
    assert results[2]["error"]["code"] == "invalid_arguments"  # no tenant in the arguments
    assert read_document(tenant, session, "default") == {
        "revision": 2,
        "memory": {"scene": "bridge"},
    }
    assert len(document_history(tenant, session, "default", 10)) == 2
    assert [o["outcome"] for o in turn.trace["memory_tools"]] == [
        {"error": "revision_conflict"},
        {"error": "scene_required"},
        {"error": "invalid_arguments"},
    ]


def test_rounds_are_bounded_and_tools_are_off_by_default(api, tenant, conversation, llm, character):
    llm.enqueue(Reply(content="Plain reply."))
    _turn(api, conversation, 1)
    assert not llm.requests[-1].get("tools")

    api.put(
        f"/api/v1/characters/{character.pk}/memory-settings/",
        {"document_tools": True},
        format="json",
    )
    llm.enqueue(*[_call("get_memory") for _ in range(3)], Reply(content="Done reading."))
    turn = _turn(api, conversation, 2)
    assert len(turn.trace["memory_tools"]) == 3
    assert llm.requests[-1]["tool_choice"] == "none"  # the last round ends in text
    assert Turn.objects.get(pk=turn.pk).status == "complete"
