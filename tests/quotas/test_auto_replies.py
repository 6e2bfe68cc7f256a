"""Auto-reply suggestions are admitted like a turn, and their tokens go to the player."""

from __future__ import annotations

from roleplay.models import ModelCall
from roleplay.quotas.selectors import usage_summary


def test_suggestions_count_and_charge_and_are_refused_at_the_limit(api, own, give_plan):
    give_plan(own.player, messages_per_day=1)
    path = f"/api/v1/conversations/{own.conversation.pk}/auto-replies/"
    body = {"assistant_message_id": str(own.messages[-1].id), "language": "en", "wait_ms": 0}
    first = api.post(path, body, format="json")
    assert first.status_code == 200, first.content[:300]
    calls = ModelCall.objects.filter(tenant=own.tenant, purpose="auto_reply")
    tokens = sum(call.total_tokens for call in calls)
    assert tokens > 0
    summary = usage_summary(own.player)
    assert (summary.messages_today.used, summary.tokens_today.used) == (1, tokens)
    again = api.post(path, body, format="json")
    assert again.status_code == 429
    assert again.json()["error"]["code"] == "quota_exceeded"
    assert ModelCall.objects.filter(tenant=own.tenant, purpose="auto_reply").count() == len(calls)
