"""The compact tests' conversation: a small window (2,048 tokens, 256 out), Compact on with
the same model config as the compactor (trigger 0.5, the last two groups kept)."""

from __future__ import annotations

import pytest

from roleplay.models import ModelConfig, Scenario


@pytest.fixture
def compact_conversation(conversation, tenant, llm):
    small = ModelConfig.objects.create(
        tenant=tenant,
        name="small-window",
        provider="openai_compatible",
        model="scripted-model",
        base_url=llm.base_url,
        context_limit=2048,
        max_output_tokens=256,
        timeout_ms=5000,
    )
    scenario = Scenario.objects.create(
        tenant=tenant,
        name="compact",
        model_config=small,
        compact={
            "enabled": True,
            "compactorModelConfigId": str(small.pk),
            "triggerRatio": 0.5,
            "keepLastCanonicalGroups": 2,
            "safetyMarginTokens": 256,
            "maxSummaryTokens": 300,
        },
    )
    conversation.scenario = scenario
    conversation.model_config = small
    conversation.save(update_fields=["scenario", "model_config"])
    return conversation
