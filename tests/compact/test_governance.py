"""Context governance (Agent V2 with Compact): ``enforce`` gives the background run the
compacted projection (Compact's summary and the kept messages) instead of the raw recent
history; ``shadow`` records what ``enforce`` would have done and keeps the original."""

from __future__ import annotations

import json

import pytest

from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelConfig, PlanningRun, Scenario, Turn
from tests.agentic.world import scripted_world
from tests.compact.test_compact_turns import FACT, FILLER, chat
from tests.ws.test_chat_socket import connect

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def compactor_or_actor(request: dict) -> Reply:
    if "You compress the older part" in request["messages"][0]["content"]:
        user = request["messages"][1]["content"].split('"latest_user')[0]
        facts = list(dict.fromkeys(FACT.findall(user)))
        body = {"canonical": facts, "interaction": [], "open_threads": []}
        return Reply(content=json.dumps(body))
    return Reply(content="The keeper answers. " + FILLER, chunks=3)


async def governed_world(tenant, player, character, llm, mode: str):
    scenario, conversation, router = await scripted_world(tenant, player, character, llm)
    actor = await ModelConfig.objects.aget(tenant=tenant, name="actor")
    actor.context_limit, actor.max_output_tokens = 2048, 256
    await actor.asave(update_fields=["context_limit", "max_output_tokens"])
    scenario.compact = {
        "enabled": True,
        "compactorModelConfigId": "actor",
        "triggerRatio": 0.5,
        "keepLastCanonicalGroups": 2,
        "safetyMarginTokens": 256,
        "maxSummaryTokens": 300,
    }
    # written as a whole, past the service: it refuses each half without the other
    agentic = {**scenario.agentic_v2, "contextGovernance": {"mode": mode}}
    await Scenario.objects.filter(pk=scenario.pk).aupdate(
        compact=scenario.compact, agentic_v2=agentic
    )
    router.answers["actor"] = compactor_or_actor
    return conversation


async def until_compacted(conversation) -> Turn:
    comm = await connect(conversation)
    try:
        for n in range(12):
            events = await chat(comm, f"FACT-{n}X I tell the keeper. {FILLER}", f"g{n}")
            assert events[-1]["type"] == "turn.completed", events[-1]
            turn = await Turn.objects.aget(pk=events[-1]["turn_id"])
            if turn.trace.get("compact", {}).get("outcome") == "compacted":
                return turn
    finally:
        await comm.disconnect()
    raise AssertionError("never compacted")


async def planning_inputs(turn: Turn) -> dict:
    run = await PlanningRun.objects.aget(turn=turn)
    return run.snapshot["inputs"]


async def test_enforce_gives_the_background_the_compacted_projection(
    tenant, player, character, llm
):
    conversation = await governed_world(tenant, player, character, llm, "enforce")
    turn = await until_compacted(conversation)
    governance = turn.trace["compact"]["governance"]
    assert governance["mode"] == "enforce" and governance["background_reads"] == "projection"
    given = await planning_inputs(turn)
    assert "FACT-0X" in given["summary"]
    assert not any("FACT-0X I tell" in text for _role, text in given["history"])


async def test_shadow_only_records_what_enforce_would_do(tenant, player, character, llm):
    conversation = await governed_world(tenant, player, character, llm, "shadow")
    turn = await until_compacted(conversation)
    governance = turn.trace["compact"]["governance"]
    assert governance["mode"] == "shadow" and governance["background_reads"] == "original"
    assert governance["projection_messages"] < governance["original_messages"]
    given = await planning_inputs(turn)
    assert given["summary"] == ""
    assert any("FACT-" in text for _role, text in given["history"])
