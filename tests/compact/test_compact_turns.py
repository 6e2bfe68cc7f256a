"""Compact in real turns over the chat socket (real PostgreSQL, Redis, the scripted model
server): checkpoints saved by compare-and-set before the Actor runs, read back and
continued from, invalidated when covered history changes, and the failure ladder."""

from __future__ import annotations

import json
import re

import pytest
from asgiref.sync import sync_to_async

from roleplay.llm.scripted_server import Reply
from roleplay.models import CompactCheckpoint, ModelCall, Scenario, Turn
from tests.ws.test_chat_socket import connect
from tests.ws.test_rewrites import send, until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

FACT = re.compile(r"FACT-[A-Z0-9]+")
FILLER = " ".join(["the tide rolls over the old stones of the harbour wall"] * 6)


class Script:
    """The compactor keeps every fact marker of its input (in order); the Actor's replies
    are long enough to fill a small window quickly."""

    def __init__(self, llm) -> None:
        self.compactor_inputs: list[str] = []
        self.fail_compactor = 0
        llm.default = Reply.from_callable(self.answer)

    def answer(self, request: dict) -> Reply:
        system = request["messages"][0]["content"]
        if "You compress the older part" in system:
            user = request["messages"][1]["content"]
            self.compactor_inputs.append(user)
            if self.fail_compactor:
                self.fail_compactor -= 1
                return Reply(content="not a summary")
            facts = list(
                dict.fromkeys(FACT.findall(user.split("LATEST")[0].split('"latest_user')[0]))
            )
            return Reply(
                content=json.dumps(
                    {
                        "canonical": facts or ["nothing yet"],
                        "interaction": ["calm"],
                        "open_threads": [],
                    }
                )
            )
        return Reply(content="Mira answers. " + FILLER, chunks=3)


async def chat(comm, text: str, client: str) -> list[dict]:
    await send(comm, type="user_message", client_message_id=client, content=text)
    return await until(comm, "turn.completed", timeout=20)


async def compact_trace(turn_id) -> dict:
    return (await Turn.objects.aget(pk=turn_id)).trace.get("compact", {})


def actor_requests(llm) -> list[dict]:
    return [r for r in llm.requests if "You compress" not in r["messages"][0]["content"]]


async def play_until_compacted(comm, limit: int = 12) -> tuple[int, dict]:
    for n in range(limit):
        events = await chat(comm, f"FACT-{n}X I tell Mira something. {FILLER}", f"c{n}")
        assert events[-1]["type"] == "turn.completed", events[-1]
        trace = await compact_trace(events[-1]["turn_id"])
        if trace.get("outcome") == "compacted":
            return n, trace
    raise AssertionError("never compacted")


async def test_compaction_saves_a_checkpoint_the_actor_reads_instead_of_old_history(
    compact_conversation, llm
):
    Script(llm)
    comm = await connect(compact_conversation)
    n, trace = await play_until_compacted(comm)
    assert n >= 1 and trace["persisted"] is True and trace["version"] == 1
    assert trace["tokens_before"] > trace["trigger"] and trace["tokens_after"] <= trace["budget"]
    assert trace["budget"] == 2048 - 256 - 256
    sent = actor_requests(llm)[-1]["messages"]
    text = json.dumps(sent)
    assert "[SUMMARY OF THE EARLIER CONVERSATION]" in text and "FACT-0X" in text
    # the covered raw messages are gone from the request; the latest input is there
    assert "FACT-0X I tell Mira" not in text and f"FACT-{n}X I tell Mira" in text
    [row] = await sync_to_async(list)(
        CompactCheckpoint.objects.filter(conversation=compact_conversation)
    )
    assert row.version == 1 and row.chain is None and row.status == "active"
    assert row.summary["format"] == "structured_json"
    assert await ModelCall.objects.filter(purpose="compactor").acount() >= 1
    # the next turn reads it back and continues from it
    events = await chat(comm, f"FACT-{n + 1}X more. {FILLER}", "next")
    after = await compact_trace(events[-1]["turn_id"])
    assert any(s["step"] == "read_back" and s["ok"] for s in after["steps"])
    assert "FACT-0X" in json.dumps(actor_requests(llm)[-1]["messages"])
    await comm.disconnect()


async def test_the_latest_input_is_context_only_for_the_compactor(compact_conversation, llm):
    script = Script(llm)
    comm = await connect(compact_conversation)
    await play_until_compacted(comm)
    material = json.loads(script.compactor_inputs[-1])
    assert set(material) == {"earlier_summary", "messages", "latest_user_message_context_only"}
    assert material["latest_user_message_context_only"].startswith("FACT-")
    await comm.disconnect()


async def test_an_edit_of_covered_history_invalidates_and_rebuilds(compact_conversation, llm):
    Script(llm)
    comm = await connect(compact_conversation)
    await play_until_compacted(comm)
    row = await CompactCheckpoint.objects.aget(conversation=compact_conversation, version=1)
    await send(
        comm, type="edit", message_id=str(row.first_message_id), content="FACT-EDITED changed."
    )
    await until(comm, "message.updated")
    # invalidated by the edit itself (``compact.services.history``), before any turn
    old = await CompactCheckpoint.objects.aget(conversation=compact_conversation, version=1)
    assert old.status == "invalidated" and old.reason == "covered_content_changed"
    events = await chat(comm, f"FACT-ZZ after the edit. {FILLER}", "after-edit")
    trace = await compact_trace(events[-1]["turn_id"])
    assert not any(s["step"] == "read_back" and s["ok"] for s in trace["steps"])
    assert "FACT-0X" not in json.dumps(actor_requests(llm)[-1]["messages"])
    if trace.get("outcome") == "compacted":
        new = await CompactCheckpoint.objects.aget(conversation=compact_conversation, version=2)
        assert new.chain is None and "FACT-EDITED" in json.dumps(new.summary)
    await comm.disconnect()


async def test_a_failing_compactor_falls_back_to_the_original_when_it_fits(
    compact_conversation, llm
):
    script = Script(llm)
    script.fail_compactor = 100
    comm = await connect(compact_conversation)
    outcome = None
    for n in range(6):
        events = await chat(comm, f"FACT-{n}X hello. {FILLER}", f"c{n}")
        assert events[-1]["type"] == "turn.completed"
        trace = await compact_trace(events[-1]["turn_id"])
        outcome = trace.get("outcome")
        if outcome != "not_due":
            break
    assert outcome in ("original", "dropped_history")
    assert any(s["step"] == "compactor_failed" for s in trace["steps"])
    assert not await CompactCheckpoint.objects.filter(conversation=compact_conversation).aexists()
    await comm.disconnect()


async def test_a_regenerate_uses_a_checkpoint_but_never_writes_one(compact_conversation, llm):
    Script(llm)
    comm = await connect(compact_conversation)
    await play_until_compacted(comm)
    versions = await CompactCheckpoint.objects.filter(conversation=compact_conversation).acount()
    await send(comm, type="regenerate", client_message_id="r1")
    events = await until(comm, "turn.completed", timeout=20)
    assert events[-1]["type"] == "turn.completed"
    trace = await compact_trace(events[-1]["turn_id"])
    assert trace["mutation"] is False
    if trace.get("outcome") == "compacted":
        assert trace["persisted"] is False
    assert (
        await CompactCheckpoint.objects.filter(conversation=compact_conversation).acount()
        == versions
    )
    await comm.disconnect()


async def test_conversations_without_compact_have_no_compact_trace(conversation, llm):
    comm = await connect(conversation)
    llm.enqueue(Reply(content="Plain.", chunks=1))
    events = await chat(comm, "Hello.", "c1")
    assert "compact" not in (await Turn.objects.aget(pk=events[-1]["turn_id"])).trace
    await comm.disconnect()


async def test_the_ladder_drops_old_groups_when_nothing_else_fits(compact_conversation, llm):
    script = Script(llm)
    script.fail_compactor = 1000
    comm = await connect(compact_conversation)
    seen = []
    for n in range(12):
        events = await chat(comm, f"FACT-{n}X hello. {FILLER}", f"c{n}")
        assert events[-1]["type"] == "turn.completed", events[-1]
        trace = await compact_trace(events[-1]["turn_id"])
        seen.append(trace.get("outcome"))
        if trace.get("outcome") == "dropped_history":
            steps = [s["step"] for s in trace["steps"]]
            assert steps[0] == "due" and "compactor_failed" in steps and "dropped_group" in steps
            assert steps.index("compactor_failed") < steps.index("dropped_group")
            break
    assert "dropped_history" in seen, seen
    await comm.disconnect()


async def test_a_prompt_that_cannot_fit_is_a_context_overflow(compact_conversation, llm):
    script = Script(llm)
    script.fail_compactor = 1000
    comm = await connect(compact_conversation)
    events = await chat(comm, "FACT-BIG " + FILLER * 30, "huge")
    assert events[-1]["type"] == "error" and events[-1]["code"] == "context_overflow"
    await comm.disconnect()


async def test_a_save_that_times_out_is_confirmed_by_reading_it_back(compact_conversation, llm):
    import threading

    import psycopg
    from django.db import connection

    Script(llm)
    scenario = await Scenario.objects.aget(pk=compact_conversation.scenario_id)
    scenario.compact = {**scenario.compact, "checkpointMutationTimeoutMs": 1000}
    await scenario.asave(update_fields=["compact"])
    comm = await connect(compact_conversation)
    await play_until_compacted(comm)
    params = connection.get_connection_params()
    dsn = {k: v for k, v in params.items() if k in ("dbname", "user", "password", "host", "port")}

    def hold_lock(held: threading.Event) -> None:
        # another client holds the newest checkpoint's row for 1.6 s: the save waits
        with psycopg.connect(**dsn) as other:
            other.execute(
                "SELECT 1 FROM roleplay_compactcheckpoint WHERE conversation_id = %s FOR UPDATE",
                [compact_conversation.pk],
            )
            held.set()
            threading.Event().wait(1.6)

    confirmed = None
    for n in range(10):
        held = threading.Event()
        locker = threading.Thread(target=hold_lock, args=(held,))
        locker.start()
        held.wait(5)
        events = await chat(comm, f"FACT-L{n} more. {FILLER}", f"l{n}")
        locker.join()
        trace = await compact_trace(events[-1]["turn_id"])
        timeouts = [s for s in trace["steps"] if s["step"] == "save_timeout"]
        if timeouts:
            confirmed = timeouts[0]["confirmed"]
            assert trace["persisted"] is confirmed
            break
    assert confirmed is True
    await comm.disconnect()


async def test_a_branch_continues_from_the_parents_checkpoint(compact_conversation, llm):
    from memory.models import Message
    from roleplay.branches import services as branches

    Script(llm)
    comm = await connect(compact_conversation)
    await play_until_compacted(comm)
    await comm.disconnect()
    last = await Message.objects.filter(session_id=compact_conversation.session_id).alatest("ts")
    branch = await sync_to_async(branches.create_branch)(compact_conversation, last.id)
    calls = await ModelCall.objects.filter(purpose="compactor").acount()

    comm = await connect(branch)
    events = await chat(comm, f"FACT-BRANCH in the branch. {FILLER}", "b1")
    trace = await compact_trace(events[-1]["turn_id"])
    assert any(s["step"] == "read_back" and s["ok"] for s in trace["steps"]), trace
    sent = json.dumps(actor_requests(llm)[-1]["messages"])
    assert "[SUMMARY OF THE EARLIER CONVERSATION]" in sent and "FACT-0X" in sent
    assert "FACT-0X I tell Mira" not in sent  # the covered shared messages stay summarised
    if trace.get("outcome") != "compacted":  # nothing summarised again for the branch
        assert await ModelCall.objects.filter(purpose="compactor").acount() == calls
    await comm.disconnect()
