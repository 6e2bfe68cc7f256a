"""The compaction's candidates (seed 002, Compact, ``reliability``): a request to the
compactor must leave ``minGenerationTokens`` of its model's window for the answer, so a
candidate too large is made smaller by whole groups before anything is sent, at most
``maxCandidateAttempts`` candidates; ``executionPolicy: bounded_recent`` keeps the most
recent groups and gives the older uncovered history (and the earlier summary) up. Real
PostgreSQL, Redis, the scripted model server, the chat socket; the compactor here is a
model with a small window of its own."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from console.tokens import count_messages
from roleplay.models import CompactCheckpoint, ModelCall, ModelConfig, Scenario
from roleplay.scenarios.config import check_scenario
from tests.compact.test_compact_turns import FILLER, Script, actor_requests, chat, compact_trace
from tests.ws.test_chat_socket import connect

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

COMPRESS = "You compress the older part"
WINDOW = 1000  # the compactor's context limit
MIN_GENERATION = 440  # so a request may hold about 560 tokens: the prompt and one group


def compactor_requests(llm) -> list[dict]:
    return [r for r in llm.requests if COMPRESS in r["messages"][0]["content"]]


def with_compactor(conversation, tenant, llm, **compact) -> None:
    """The scenario's compactor is a model of ``WINDOW`` tokens; the Actor's trigger is
    high (0.9), so several groups are compressible when compaction is first due."""
    small = ModelConfig.objects.create(
        tenant=tenant,
        name="compactor-window",
        provider="openai_compatible",
        model="scripted-model",
        base_url=llm.base_url,
        context_limit=WINDOW,
        max_output_tokens=256,
        timeout_ms=5000,
    )
    scenario = Scenario.objects.get(pk=conversation.scenario_id)
    scenario.compact = {
        **scenario.compact,
        "compactorModelConfigId": str(small.pk),
        "triggerRatio": 0.9,
        "reliability": {"minGenerationTokens": MIN_GENERATION, **compact.pop("reliability", {})},
        **compact,
    }
    check_scenario({"compact": scenario.compact}, actor_config_id=None)
    scenario.save(update_fields=["compact"])


async def until_due(comm, limit: int = 16) -> tuple[str, dict]:
    for n in range(limit):
        events = await chat(comm, f"FACT-{n}X I tell Mira something. {FILLER}", f"c{n}")
        assert events[-1]["type"] == "turn.completed", events[-1]
        trace = await compact_trace(events[-1]["turn_id"])
        if trace.get("outcome") != "not_due":
            return events[-1]["turn_id"], trace
    raise AssertionError("compaction was never due")


def steps(trace: dict) -> list[str]:
    return [s["step"] for s in trace["steps"]]


async def test_a_candidate_too_large_for_the_compactor_is_made_smaller_before_sending(
    compact_conversation, tenant, llm
):
    await sync_to_async(with_compactor)(compact_conversation, tenant, llm)
    Script(llm)
    comm = await connect(compact_conversation)
    _turn, trace = await until_due(comm)
    assert "candidate_too_large" in steps(trace), trace["steps"]
    assert trace["outcome"] == "compacted", trace["steps"]
    sent = compactor_requests(llm)
    assert sent
    for request in sent:  # every request left the answer its minimum, and asked no more
        room = WINDOW - count_messages(request["messages"])
        assert room >= MIN_GENERATION
        assert request["max_tokens"] == min(256, room)
    row = await CompactCheckpoint.objects.aget(conversation=compact_conversation, version=1)
    refused = [s for s in trace["steps"] if s["step"] == "candidate_too_large"]
    folded = [s for s in trace["steps"] if s["step"] == "compressed"][0]["messages"]
    assert row.covered_count == folded < 2 * refused[0]["groups"]
    # the oldest messages are summarised (the chain continues from the start); the
    # compressible ones the candidate left out stay verbatim
    text = json.dumps(actor_requests(llm)[-1]["messages"])
    assert "[SUMMARY OF THE EARLIER CONVERSATION]" in text
    assert "FACT-0X I tell Mira" not in text
    assert "FACT-0X" in text and all(f"FACT-{n}X I tell Mira" in text for n in range(2, 5))
    await comm.disconnect()


async def test_candidates_stop_after_max_candidate_attempts(compact_conversation, tenant, llm):
    await sync_to_async(with_compactor)(
        compact_conversation, tenant, llm, reliability={"maxCandidateAttempts": 1}
    )
    Script(llm)
    comm = await connect(compact_conversation)
    turn_id, trace = await until_due(comm)
    assert steps(trace)[1:] == [
        "candidate_too_large",
        "candidates_exhausted",
        "compactor_failed",
        "original_fits",
    ]
    assert trace["degraded"]["reason"] == "compact_candidate_too_large"
    assert trace["outcome"] == "original"
    assert not compactor_requests(llm)  # no candidate reached the model
    assert not await ModelCall.objects.filter(purpose="compactor", turn_id=turn_id).aexists()
    await comm.disconnect()


async def test_bounded_recent_keeps_the_most_recent_groups_and_gives_the_older_up(
    compact_conversation, tenant, llm
):
    await sync_to_async(with_compactor)(
        compact_conversation, tenant, llm, executionPolicy="bounded_recent"
    )
    Script(llm)
    comm = await connect(compact_conversation)
    _turn, trace = await until_due(comm)
    assert trace["outcome"] == "compacted", trace["steps"]
    assert "candidate_too_large" in steps(trace) and "history_abandoned" in steps(trace)
    row = await CompactCheckpoint.objects.aget(conversation=compact_conversation, version=1)
    assert row.chain is None
    [material] = [json.loads(r["messages"][1]["content"]) for r in compactor_requests(llm)]
    said = " ".join(m["text"] for m in material["messages"])
    assert "FACT-0X" not in said  # the oldest group was given up, not summarised
    text = json.dumps(actor_requests(llm)[-1]["messages"])
    assert "FACT-0X" not in text and "[SUMMARY OF THE EARLIER CONVERSATION]" in text
    await comm.disconnect()
