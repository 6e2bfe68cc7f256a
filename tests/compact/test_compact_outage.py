"""Compact while the compactor is out (seed 002, Compact; the failure ladder): a compaction
that fails or misses its deadline never drops covered history silently. The turn keeps the
newest valid summary with the groups it does not cover (dropping the oldest uncovered
groups only when they cannot fit), says so in the trace (``degraded``), and the
compaction is retried in the background; once the compactor answers again every planted
fact is back. Real PostgreSQL, Redis, the scripted model server (whose compactor answers
after the compaction's deadline), the chat socket."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async

from roleplay.compact.services import prepare as compact_prepare
from roleplay.llm.scripted_server import Reply
from roleplay.models import CompactCheckpoint, Scenario
from tests.compact.test_compact_turns import (
    FACT,
    FILLER,
    Script,
    actor_requests,
    chat,
    compact_trace,
)
from tests.ws.test_chat_socket import connect

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

COMPRESS = "You compress the older part"


class SlowCompactor(Script):
    """:class:`Script`, whose compactor answers only after 2.5 s while ``out`` (the
    compaction's deadline, ``reliability.maxCompactionMs``, is 1 s here)."""

    def __init__(self, llm) -> None:
        super().__init__(llm)
        self.out = False
        self.late = 0

    def answer(self, request: dict) -> Reply:
        if self.out and COMPRESS in request["messages"][0]["content"]:
            self.late += 1
            return Reply(content="too late", delay=2.5)
        return super().answer(request)


@pytest.fixture
def one_second_deadline(compact_conversation):
    scenario = Scenario.objects.get(pk=compact_conversation.scenario_id)
    scenario.compact = {**scenario.compact, "reliability": {"maxCompactionMs": 1000}}
    scenario.save(update_fields=["compact"])
    return compact_conversation


async def sent_ahead(turn_id) -> dict:
    """The post-turn phase's record (written after ``turn.completed``)."""
    for _ in range(200):
        trace = await compact_trace(turn_id)
        if "ahead" in trace:
            return trace["ahead"]
        await asyncio.sleep(0.05)
    raise AssertionError("no retry was sent")


def actor_text(llm) -> str:
    return json.dumps(actor_requests(llm)[-1]["messages"])


async def test_a_compactor_past_its_deadline_keeps_the_summary_and_retries(
    one_second_deadline, llm
):
    conversation = one_second_deadline
    script = SlowCompactor(llm)
    comm = await connect(conversation)
    planted: list[str] = []
    for n in range(12):
        planted.append(f"FACT-{n}X")
        events = await chat(comm, f"FACT-{n}X I tell Mira something. {FILLER}", f"c{n}")
        if (await compact_trace(events[-1]["turn_id"])).get("outcome") == "compacted":
            break
    row = await CompactCheckpoint.objects.aget(conversation=conversation, version=1)
    covered = FACT.findall(json.dumps(row.summary))
    assert covered and set(covered) <= set(planted)

    script.out = True
    degraded = None
    for n in range(len(planted), len(planted) + 12):
        planted.append(f"FACT-{n}X")
        events = await chat(comm, f"FACT-{n}X I tell Mira more. {FILLER}", f"c{n}")
        assert events[-1]["type"] == "turn.completed", events[-1]
        trace = await compact_trace(events[-1]["turn_id"])
        text = actor_text(llm)
        # every fact the summary holds reaches the Actor on every turn of the outage
        assert "[SUMMARY OF THE EARLIER CONVERSATION]" in text, trace["steps"]
        assert all(fact in text for fact in covered), (n, trace["steps"])
        if trace.get("outcome") == "dropped_history":
            degraded, degraded_id = trace, events[-1]["turn_id"]
            break
    assert degraded is not None, "the prompt never outgrew the budget"
    assert script.late >= 1
    failed = [s for s in degraded["steps"] if s["step"] == "compactor_failed"]
    assert failed and failed[0]["error"] == "compaction_timeout"
    assert degraded["degraded"]["reason"] == "compaction_timeout"
    assert degraded["degraded"]["summary_kept"] == 1
    assert degraded["degraded"]["dropped_groups"] >= 1
    assert degraded["degraded"]["retry"] == "background"
    assert (await sent_ahead(degraded_id))["sent"] is True
    assert "summary_dropped" not in [s["step"] for s in degraded["steps"]]

    # the retry the failed turn sent, run as the worker would once the compactor answers
    script.out = False
    ids = (str(conversation.pk), str(conversation.scenario_id), degraded_id)
    assert await sync_to_async(compact_prepare.prepare)(*ids) == "prepared"
    planted.append("FACT-LASTX")
    events = await chat(comm, f"FACT-LASTX I tell Mira at last. {FILLER}", "last")
    trace = await compact_trace(events[-1]["turn_id"])
    assert trace["outcome"] == "compacted" and trace["prepared"] is True
    text = actor_text(llm)
    missing = [fact for fact in planted if fact not in text]
    assert not missing, missing
    await comm.disconnect()


async def test_a_compactor_error_is_recorded_as_degraded(one_second_deadline, llm):
    script = Script(llm)
    comm = await connect(one_second_deadline)
    for n in range(12):
        events = await chat(comm, f"FACT-{n}X I tell Mira something. {FILLER}", f"c{n}")
        if (await compact_trace(events[-1]["turn_id"])).get("outcome") == "compacted":
            break
    script.fail_compactor = 1000
    for n in range(12, 24):
        events = await chat(comm, f"FACT-{n}X more. {FILLER}", f"c{n}")
        trace = await compact_trace(events[-1]["turn_id"])
        if trace.get("outcome") in ("original", "dropped_history"):
            break
    assert trace["degraded"]["reason"] == "compact_summary_invalid"
    assert trace["degraded"]["summary_kept"] == 1
    assert "[SUMMARY OF THE EARLIER CONVERSATION]" in actor_text(llm)
    await comm.disconnect()


async def test_bounded_recent_gives_the_summary_up_with_the_uncovered_groups(
    one_second_deadline, llm
):
    """The seed's ``bounded_recent``: dropping uncovered history breaks the summary's
    chain, so the summary goes with it (recorded, not silent)."""
    scenario = await Scenario.objects.aget(pk=one_second_deadline.scenario_id)
    scenario.compact = {**scenario.compact, "executionPolicy": "bounded_recent"}
    await scenario.asave(update_fields=["compact"])
    script = SlowCompactor(llm)
    comm = await connect(one_second_deadline)
    for n in range(12):
        events = await chat(comm, f"FACT-{n}X I tell Mira something. {FILLER}", f"c{n}")
        if (await compact_trace(events[-1]["turn_id"])).get("outcome") == "compacted":
            break
    script.out = True
    for n in range(12, 24):
        events = await chat(comm, f"FACT-{n}X more. {FILLER}", f"c{n}")
        trace = await compact_trace(events[-1]["turn_id"])
        if trace.get("outcome") == "dropped_history":
            break
    steps = [s["step"] for s in trace["steps"]]
    assert steps.index("summary_dropped") < steps.index("dropped_group")
    assert trace["degraded"]["summary_kept"] is None
    assert "[SUMMARY OF THE EARLIER CONVERSATION]" not in actor_text(llm)
    await comm.disconnect()
