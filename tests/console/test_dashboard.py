"""The dashboard: counts scoped to the tenant and the demo-model notice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from roleplay.models import ModelCall, ModelConfig, Turn
from roleplay.selectors import dashboard_stats

pytestmark = pytest.mark.django_db


def _turn(tenant, conversation, status, n):
    import uuid

    return Turn.objects.create(
        tenant=tenant,
        conversation=conversation,
        client_message_id=f"c-{n}",
        user_message_id=uuid.uuid4(),
        assistant_message_id=uuid.uuid4(),
        status=status,
    )


def test_counts(operator_client, tenant, conversation, model_config, foreign):
    ModelCall.objects.create(tenant=tenant, purpose="actor", model="m", outcome="ok")
    old = ModelCall.objects.create(tenant=tenant, purpose="actor", model="m", outcome="ok")
    ModelCall.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=2))
    ModelCall.objects.create(tenant=foreign["config"].tenant, purpose="a", model="m", outcome="ok")
    _turn(tenant, conversation, "failed", 1)
    _turn(tenant, conversation, "complete", 2)
    stale = _turn(tenant, conversation, "failed", 3)
    Turn.objects.filter(pk=stale.pk).update(started_at=timezone.now() - timedelta(days=2))

    stats = dashboard_stats(tenant)
    assert (stats["characters"], stats["conversations"]) == (1, 1)
    assert (stats["model_calls_24h"], stats["failed_turns_24h"]) == (1, 1)
    assert stats["default_config"] == model_config and stats["demo_model"] is False
    page = operator_client.get("/console/").content.decode()
    assert 'id="stat-characters">1<' in page and 'id="stat-conversations">1<' in page
    assert 'id="stat-model-calls">1<' in page and 'id="stat-failed-turns">1<' in page
    assert "bundled demo model" not in page


def test_demo_notice_when_the_default_is_a_demo_config(admin_client, tenant):
    ModelConfig.objects.create(
        tenant=tenant,
        name="Bundled demo",
        provider="llama_cpp",
        model="gemma",
        is_demo=True,
        is_default=True,
    )
    page = admin_client.get("/console/").content.decode()
    assert "bundled demo model" in page and 'class="badge demo"' in page
    assert "tiny local base model" in page and "Configure a real model" in page
