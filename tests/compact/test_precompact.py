"""Pre-compaction (beyond the seed): after a turn whose next prompt will pass the trigger,
the next checkpoint is prepared in the background (the Celery task, run here by the eager
app inside the post-turn phase) and the next due turn adopts it instead of calling the
compactor; one whose covered messages changed, or whose version is no longer the newest,
is refused. Real PostgreSQL, Redis, the scripted model server, the chat socket."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from console.celery import app
from console.tokens import count_tokens
from roleplay.compact.engine import budget as budgets
from roleplay.compact.services import checkpoints as store
from roleplay.compact.services import prepare as compact_prepare
from roleplay.models import CompactCheckpoint, CompactPreparation, ModelCall, Turn
from tests.compact.test_compact_turns import (
    FILLER,
    Script,
    actor_requests,
    chat,
    compact_trace,
)
from tests.ws.test_chat_socket import connect
from tests.ws.test_rewrites import send, until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def eager():
    previous, app.conf.task_always_eager = app.conf.task_always_eager, True
    yield
    app.conf.task_always_eager = previous


async def compactor_calls(turn_id) -> int:
    return await ModelCall.objects.filter(purpose="compactor", turn_id=turn_id).acount()


async def play(comm, n: int, text: str) -> tuple[str, dict, bool]:
    """Turn ``n``; (turn id, its compact trace, whether it sent a preparation). A turn whose
    next prompt passes the trigger runs the post-turn phase ``compact_ahead`` (the eager
    task inside it) after ``turn.completed``: its record is awaited."""
    events = await chat(comm, text, f"p{n}")
    assert events[-1]["type"] == "turn.completed", events[-1]
    turn_id, reply = events[-1]["turn_id"], events[-1]["content"]
    trace = await compact_trace(turn_id)
    tokens = trace.get("tokens_after", trace["tokens_before"])
    if not budgets.due_next(tokens, count_tokens(text), count_tokens(reply), trace["trigger"]):
        return turn_id, trace, False
    for _ in range(200):
        trace = await compact_trace(turn_id)
        if "ahead" in trace:
            return turn_id, trace, True
        await asyncio.sleep(0.1)
    raise AssertionError("the preparation was never sent")


async def test_a_due_turn_adopts_the_checkpoint_prepared_after_the_turn_before(
    compact_conversation, llm, eager
):
    Script(llm)
    comm = await connect(compact_conversation)
    prepared_after = None
    for n in range(12):
        turn_id, trace, sent = await play(comm, n, f"FACT-{n}X I tell Mira. {FILLER}")
        if trace.get("outcome") == "compacted":
            break
        if sent:
            assert trace["ahead"]["sent"] is True
            assert trace["ahead"]["predicted"] > trace["trigger"] >= trace["tokens_before"]
            row = await CompactPreparation.objects.aget(conversation=compact_conversation)
            assert row.base_version == 0 and row.chain is None
            assert row.audit["after_turn"] == turn_id and row.audit["model_calls"]
            assert await compactor_calls(turn_id) >= 1  # paid after that turn, not in the next
            prepared_after = turn_id
    else:
        raise AssertionError("never compacted")
    assert prepared_after is not None
    steps = [s["step"] for s in trace["steps"]]
    assert "adopted_prepared" in steps and trace["prepared"] is True
    assert trace["persisted"] is True and trace["version"] == 1
    assert trace["tokens_after"] <= trace["trigger"]
    assert await compactor_calls(turn_id) == 0  # no compactor call on this turn's path
    saved = await CompactCheckpoint.objects.aget(conversation=compact_conversation, version=1)
    assert saved.audit["prepared"] is True and saved.chain is None
    text = json.dumps(actor_requests(llm)[-1]["messages"])
    assert "[SUMMARY OF THE EARLIER CONVERSATION]" in text and "FACT-0X" in text
    assert "FACT-0X I tell Mira" not in text
    await comm.disconnect()


async def test_a_preparation_over_edited_messages_is_refused(compact_conversation, llm):
    Script(llm)
    comm = await connect(compact_conversation)
    for n in range(3):
        await chat(comm, f"FACT-{n}X I tell Mira. {FILLER}", f"e{n}")
    conversation_id, scenario_id = (
        str(compact_conversation.pk),
        str(compact_conversation.scenario_id),
    )
    outcome = await sync_to_async(compact_prepare.prepare)(conversation_id, scenario_id)
    assert outcome == "prepared"
    row = await CompactPreparation.objects.aget(conversation=compact_conversation)
    await send(comm, type="edit", message_id=str(row.first_message_id), content="FACT-EDITED.")
    await until(comm, "message.updated")
    for n in range(3, 12):
        events = await chat(comm, f"FACT-{n}X more. {FILLER}", f"e{n}")
        trace = await compact_trace(events[-1]["turn_id"])
        if trace.get("outcome") != "not_due":
            break
    refused = [s for s in trace["steps"] if s["step"] == "prepared_refused"]
    assert refused and refused[0]["reason"] == "covered_content_changed"
    assert trace["outcome"] == "compacted" and not trace.get("prepared")
    assert await compactor_calls(events[-1]["turn_id"]) >= 1
    saved = await CompactCheckpoint.objects.aget(conversation=compact_conversation, version=1)
    assert "FACT-EDITED" in json.dumps(saved.summary)
    await comm.disconnect()


async def test_preparing_twice_asks_once_and_a_newer_version_makes_it_stale(
    compact_conversation, llm
):
    Script(llm)
    comm = await connect(compact_conversation)
    for n in range(3):
        await chat(comm, f"FACT-{n}X I tell Mira. {FILLER}", f"s{n}")
    await comm.disconnect()
    ids = (str(compact_conversation.pk), str(compact_conversation.scenario_id))
    prepare = sync_to_async(compact_prepare.prepare)
    assert await prepare(*ids) == "prepared"
    calls = await ModelCall.objects.filter(purpose="compactor").acount()
    assert await prepare(*ids) == "unchanged"  # a second delivery: no second compactor call
    assert await ModelCall.objects.filter(purpose="compactor").acount() == calls
    ready = await sync_to_async(store.prepared)(*ids, 0)
    assert ready is not None and ready.version == 1
    # a version saved meanwhile (a turn, an operator): the preparation is not offered, and a
    # preparation made against version 0 is not kept
    await sync_to_async(store.save)(
        compact_conversation.tenant_id, *ids, ready, expected=0, audit={"by": "test"}
    )
    assert await sync_to_async(store.prepared)(*ids, 1) is None
    assert (
        await sync_to_async(store.prepare)(
            compact_conversation.tenant_id, *ids, ready, base=0, audit={}
        )
        is False
    )


async def test_a_preparation_needs_compact_and_the_conversation_s_scenario(
    compact_conversation, conversation, llm
):
    assert await sync_to_async(compact_prepare.prepare)(str(conversation.pk), "x") in (
        "scenario_changed",
        "off",
    )
    ids = (str(compact_conversation.pk), str(compact_conversation.scenario_id))
    # no history yet: nothing to fold
    assert await sync_to_async(compact_prepare.prepare)(*ids) == "nothing_to_compress"
    assert not await CompactPreparation.objects.filter(conversation=compact_conversation).aexists()


async def test_a_turn_with_nothing_due_announces_no_compact_phase(compact_conversation, llm):
    Script(llm)
    comm = await connect(compact_conversation)
    events = await chat(comm, "FACT-1X hello.", "q1")
    turn = await Turn.objects.aget(pk=events[-1]["turn_id"])
    assert turn.trace["compact"]["outcome"] == "not_due"
    assert not any(e.get("phase") == "compact" for e in events)
    assert "compact" not in [p["name"] for p in turn.trace.get("phases", [])]
    assert turn.trace["compact"]["timings_ms"].keys() >= {"verify", "count"}
    await comm.disconnect()


async def test_a_preparation_over_a_version_invalidated_meanwhile_is_not_kept(
    compact_conversation, llm
):
    Script(llm)
    comm = await connect(compact_conversation)
    for n in range(3):
        await chat(comm, f"FACT-{n}X I tell Mira. {FILLER}", f"i{n}")
    await comm.disconnect()
    ids = (str(compact_conversation.pk), str(compact_conversation.scenario_id))
    assert await sync_to_async(compact_prepare.prepare)(*ids) == "prepared"
    ready = await sync_to_async(store.prepared)(*ids, 0)
    save = sync_to_async(store.save)
    await save(compact_conversation.tenant_id, *ids, ready, expected=0, audit={})
    # the history changed under version 1 while the next one was being prepared over it
    assert await sync_to_async(store.invalidate)(*ids, 1, "covered_content_changed")
    keep = sync_to_async(store.prepare)
    assert await keep(compact_conversation.tenant_id, *ids, ready, base=1, audit={}) is False
    assert await sync_to_async(store.prepared)(*ids, 1) is None
