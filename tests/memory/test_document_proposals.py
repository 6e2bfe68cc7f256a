"""The acceptance-gated mode of ``update_memory`` (``document_commit: on_accept``), end to
end at the scripted model server: a turn's change is held, not committed; the turn reads
its own change back; the player's next message applies it before the Actor reads the
document; a regenerated, failed or rolled-back reply drops it; a document that moved on in
between leaves it ``conflicted``; forgetting removes what is still held."""

from __future__ import annotations

import json

import pytest

from memory.documents.selectors import read_document
from memory.documents.services import put_document
from memory.models import MemoryProposal, Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn

pytestmark = pytest.mark.django_db(transaction=True)


def _call(name, **arguments):
    return Reply(tool_calls=[{"name": name, "arguments": arguments}])


def _run(api, conversation, client_id, content="Go on.", kind="chat"):
    body = {"client_message_id": client_id, "kind": kind}
    if kind == "chat":
        body["content"] = content
    res = api.post(f"/api/v1/conversations/{conversation.pk}/turns/run", body, format="json")
    assert res.status_code == 201, res.content
    return Turn.objects.get(pk=res.json()["turn"]["id"])


def _tool_results(request) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def _model_input(request) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


def _proposals(conversation) -> list[tuple]:
    rows = MemoryProposal.objects.filter(session_id=conversation.session_id)
    return list(rows.order_by("created_at").values_list("status", "reason", "revision", "data"))


@pytest.fixture
def gated(api, character, tenant, conversation):
    response = api.put(
        f"/api/v1/characters/{character.pk}/memory-settings/",
        {"document_tools": True, "document_commit": "on_accept"},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["effective"]["document_commit"] == "on_accept"
    put_document(tenant, conversation.session_id, "default", 0, {"key": "user"}, origin="api")


def test_a_held_change_is_applied_when_the_player_goes_on(api, tenant, conversation, llm, gated):
    session = conversation.session_id
    llm.enqueue(
        _call("update_memory", expectedRevision=1, memory={"key": "guard"}),
        _call("get_memory"),
        Reply(content="The guard takes the key."),
    )
    turn = _run(api, conversation, "c1", "I hand over the key.")
    results = _tool_results(llm.requests[-1])
    assert results[0] == {"revision": 2, "pending": True}
    assert results[1] == {"revision": 2, "memory": {"key": "guard"}}  # the turn sees its own
    assert read_document(tenant, session, "default") == {"revision": 1, "memory": {"key": "user"}}
    assert turn.trace["memory_tools"][0]["outcome"] == {"revision": 2, "pending": True}
    assert _proposals(conversation) == [("pending", "", None, {"key": "guard"})]

    llm.enqueue(Reply(content="The gate is quiet."))
    after = _run(api, conversation, "c2", "What now?")
    assert read_document(tenant, session, "default") == {"revision": 2, "memory": {"key": "guard"}}
    assert '"key": "guard"' in _model_input(llm.requests[-1])  # applied before the Actor read
    assert _proposals(conversation) == [("applied", "", 2, {"key": "guard"})]
    assert [p["status"] for p in after.trace["memory_proposals"]] == ["applied"]


def test_a_second_change_in_one_turn_builds_on_the_first(api, tenant, conversation, llm, gated):
    llm.enqueue(
        _call("update_memory", expectedRevision=1, memory={"key": "guard"}),
        _call("update_memory", expectedRevision=1, memory={"key": "thief"}),
        Reply(content="Hmm."),
    )
    _run(api, conversation, "c1")
    first = _tool_results(llm.requests[-1])
    assert first[1]["error"]["code"] == "revision_conflict"
    assert first[1]["error"]["details"]["current_revision"] == 2
    llm.enqueue(_call("update_memory", expectedRevision=2, memory={"key": "king"}), Reply("Ok."))
    _run(api, conversation, "c2")  # accepts the first reply's change, then holds another
    assert read_document(tenant, conversation.session_id, "default")["memory"] == {"key": "guard"}
    llm.enqueue(Reply(content="Fine."))
    _run(api, conversation, "c3")
    assert read_document(tenant, conversation.session_id, "default") == {
        "revision": 3,
        "memory": {"key": "king"},
    }


def test_a_regenerated_reply_drops_its_change(api, tenant, conversation, llm, gated):
    llm.enqueue(
        _call("update_memory", expectedRevision=1, memory={"key": "guard"}),
        Reply(content="The guard takes it."),
        _call("update_memory", expectedRevision=1, memory={"key": "river"}),
        Reply(content="The key falls in the river."),
    )
    _run(api, conversation, "c1")
    _run(api, conversation, "r1", kind="regenerate")
    llm.enqueue(Reply(content="Splash."))
    _run(api, conversation, "c2")
    assert read_document(tenant, conversation.session_id, "default")["memory"] == {"key": "river"}
    assert [(s, r) for s, r, _, _ in _proposals(conversation)] == [
        ("dropped", "reply_replaced"),
        ("applied", ""),
    ]


def test_choosing_the_first_alternative_again_keeps_its_change(
    api, tenant, conversation, llm, gated
):
    llm.enqueue(
        _call("update_memory", expectedRevision=1, memory={"key": "guard"}),
        Reply(content="The guard takes it."),
        Reply(content="Nothing happens."),
    )
    reply_id = _run(api, conversation, "c1").assistant_message_id
    _run(api, conversation, "r1", kind="regenerate")
    picked = api.post(
        f"/api/v1/conversations/{conversation.pk}/messages/{reply_id}/select-alternative",
        {"index": 0},
        format="json",
    )
    assert picked.status_code == 200, picked.content
    llm.enqueue(Reply(content="Onwards."))
    _run(api, conversation, "c2")
    assert read_document(tenant, conversation.session_id, "default")["memory"] == {"key": "guard"}


def test_a_rolled_back_or_failed_reply_drops_its_change(api, tenant, conversation, llm, gated):
    llm.enqueue(
        _call("update_memory", expectedRevision=1, memory={"key": "guard"}),
        Reply(content="The guard takes it."),
    )
    turn = _run(api, conversation, "c1")
    reply = Message.objects.get(pk=turn.assistant_message_id)
    rolled = api.post(
        f"/api/v1/conversations/{conversation.pk}/messages/rollback",
        {"timestamps": [reply.ts]},
        format="json",
    )
    assert rolled.json() == {"deleted": 1}
    llm.enqueue(
        _call("update_memory", expectedRevision=1, memory={"key": "lost"}),
        Reply(status=400, error_body={"error": {"message": "bad request"}}),
    )
    failed = _run(api, conversation, "c2")
    assert failed.status == "failed"
    llm.enqueue(Reply(content="Again."))
    _run(api, conversation, "c3")
    assert read_document(tenant, conversation.session_id, "default") == {
        "revision": 1,
        "memory": {"key": "user"},
    }
    reasons = sorted(r for s, r, _, _ in _proposals(conversation) if s == "dropped")
    assert reasons == ["reply_missing", "reply_missing"]


def test_a_document_changed_in_between_leaves_the_change_conflicted(
    api, tenant, conversation, llm, gated
):
    llm.enqueue(
        _call("update_memory", expectedRevision=1, memory={"key": "guard"}),
        Reply(content="The guard takes it."),
    )
    _run(api, conversation, "c1")
    edit = api.put(
        f"/api/v1/conversations/{conversation.pk}/memory-documents/default/",
        {"expectedRevision": 1, "memory": {"key": "operator"}},
        format="json",
    )
    assert edit.status_code == 200
    llm.enqueue(Reply(content="Hm."))
    _run(api, conversation, "c2")
    assert read_document(tenant, conversation.session_id, "default")["memory"] == {
        "key": "operator"
    }
    assert [(s, r) for s, r, _, _ in _proposals(conversation)] == [
        ("conflicted", "revision_conflict")
    ]


def test_a_held_change_is_scrubbed_and_forgetting_removes_it(
    api, tenant, player, conversation, llm, gated
):
    secret = "sk-" + "A1b2C3d4" * 5
    llm.enqueue(
        _call("update_memory", expectedRevision=1, memory={"note": f"key {secret}"}),
        Reply(content="Noted."),
    )
    _run(api, conversation, "c1")
    (held,) = _proposals(conversation)
    assert secret not in json.dumps(held[3])
    cleared = api.post(f"/api/v1/players/{player.pk}/memory/clear", format="json")
    assert cleared.status_code == 200, cleared.content
    assert cleared.json()["counts"]["proposals"] == 1
    assert not MemoryProposal.objects.filter(tenant=tenant).exists()


def test_the_commit_mode_is_validated(api, character):
    response = api.put(
        f"/api/v1/characters/{character.pk}/memory-settings/",
        {"document_commit": "later"},
        format="json",
    )
    assert response.status_code == 422
    assert response.json()["error"]["details"]["field"] == "document_commit"


def test_the_console_shows_held_changes_with_what_they_would_change(
    api, conversation, llm, gated, operator_user
):
    from django.test import Client

    llm.enqueue(
        _call("update_memory", expectedRevision=1, memory={"key": "guard"}),
        Reply(content="The guard takes it."),
    )
    _run(api, conversation, "c1")
    console = Client()
    console.force_login(operator_user)
    page = console.get(f"/console/conversations/{conversation.pk}/memory/default/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "Held changes" in html and '<strong class="held-status">pending</strong>' in html
    held = html[html.index("Held changes") : html.index("<h2>Revisions</h2>")]
    assert "guard" in held and "diff-line add" in held and "diff-line del" in held
