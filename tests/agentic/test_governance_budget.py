"""``contextGovernance.safetyMarginTokens`` on every background call (seed 002 line 143):
each call's prompt is counted against its model's window less its output and the margin;
``enforce`` refuses a call over that budget before it is sent (``context_overflow``),
``shadow`` sends it and records the count; the run keeps every call's count."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async

from roleplay.agentic.gateway import TenantModels
from roleplay.agentic.services import planning
from roleplay.llm.errors import ModelError
from roleplay.llm.types import ModelRequest
from roleplay.models import ModelConfig, PlanningRun
from roleplay.scenarios.config import AgenticV2
from tests.agentic.test_background_run import say, until
from tests.agentic.world import scripted_world
from tests.ws.test_chat_socket import connect

pytestmark = pytest.mark.django_db(transaction=True)

# 1,024 − 512 output: 512 tokens of room before the margin.
WINDOW, OUTPUT = 1024, 512


def _governed(tenant, llm, mode: str, margin: int) -> TenantModels:
    if not ModelConfig.objects.filter(tenant=tenant, name="orchestrator").exists():
        _orchestrator_config(tenant, llm)
    config = AgenticV2.model_validate(
        {
            "modelConfigs": {"actor": "actor", "orchestrator": "orchestrator"},
            "enabledTools": ["judge_npc"],
            "contextGovernance": {"mode": mode, "safetyMarginTokens": margin},
        },
        strict=False,
    )
    return TenantModels(tenant, config)


def _orchestrator_config(tenant, llm) -> ModelConfig:
    return ModelConfig.objects.create(
        tenant=tenant, name="orchestrator", provider="openai_compatible",
        model="orchestrator-model", base_url=llm.base_url, context_limit=WINDOW,
        max_output_tokens=OUTPUT, timeout_ms=20000,
    )  # fmt: skip


def _request(words: int) -> ModelRequest:
    # about ``words`` tokens of prompt
    return ModelRequest([{"role": "user", "content": " ".join(["lantern"] * words)}])


def test_enforce_refuses_a_call_over_the_window_less_the_margin(tenant, llm):
    models = _governed(tenant, llm, "enforce", 256)  # 256 tokens of room
    with pytest.raises(ModelError) as refused:
        asyncio.run(models.complete("orchestrator", _request(300)))
    assert refused.value.code == "context_overflow" and not refused.value.retryable
    assert llm.requests == []  # never sent
    (record,) = models.budgets
    assert record["purpose"] == "orchestrator" and record["over"] is True
    assert record["budget"] == WINDOW - OUTPUT - 256 and record["tokens"] > 256
    # the same call within the margin is sent
    roomy = _governed(tenant, llm, "enforce", 1)
    asyncio.run(roomy.complete("orchestrator", _request(300)))
    assert len(llm.requests) == 1 and roomy.budgets[0]["over"] is False


def test_shadow_sends_the_call_and_records_it_over_budget(tenant, llm):
    models = _governed(tenant, llm, "shadow", 256)
    asyncio.run(models.complete("orchestrator", _request(300)))
    assert len(llm.requests) == 1
    assert models.budgets[0]["over"] is True and models.budgets[0]["mode"] == "shadow"


def test_without_governance_nothing_is_counted(tenant, llm):
    _orchestrator_config(tenant, llm)
    config = AgenticV2.model_validate(
        {"modelConfigs": {"actor": "actor", "orchestrator": "orchestrator"}}, strict=False
    )
    models = TenantModels(tenant, config)
    asyncio.run(models.complete("orchestrator", _request(300)))
    assert models.budgets == []


@pytest.mark.asyncio
async def test_the_run_records_every_background_calls_budget(tenant, player, character, llm):
    _scenario, conversation, _router = await scripted_world(
        tenant, player, character, llm,
        contextGovernance={"mode": "shadow", "safetyMarginTokens": 300},
    )  # fmt: skip
    comm = await connect(conversation)
    await say(comm, "I promise to bring the key back by dawn.", "g1")
    events = await until(comm, "turn.completed")
    await comm.disconnect()
    run = await PlanningRun.objects.aget(turn_id=events[-1]["turn_id"])
    await sync_to_async(planning.execute)(str(run.pk))
    run = await PlanningRun.objects.aget(pk=run.pk)
    purposes = [b["purpose"] for b in run.governance]
    assert purposes[0] == "orchestrator" and "director" in purposes
    assert any(p.startswith("specialist:") for p in purposes)
    assert {b["budget"] for b in run.governance} == {8192 - 512 - 300}
    assert all(0 < b["tokens"] < b["budget"] and b["over"] is False for b in run.governance)
