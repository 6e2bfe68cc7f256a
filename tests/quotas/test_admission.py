"""The check at the start of every turn: exact under concurrency, and a refused turn stores
nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.models import Message
from roleplay.models import Turn
from roleplay.quotas.admission import admit_player
from roleplay.quotas.errors import QuotaExceeded
from roleplay.quotas.models import QuotaCounter
from roleplay.quotas.selectors import usage_summary
from roleplay.turns import begin_turn
from tests.races import race


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_turns_at_a_plan_of_ten_messages_let_exactly_ten_through(
    player, give_plan, conversations
):
    give_plan(player, messages_per_day=10)
    chats = conversations(50)

    def start(conversation, i):
        try:
            begin_turn(conversation, f"c-{i}", f"Hello {i}")
        except QuotaExceeded as exc:
            return exc.details
        return "admitted"

    results = race(chats, start)
    assert results.count("admitted") == 10
    refusals = [r for r in results if r != "admitted"]
    assert len(refusals) == 40
    assert {(r["quota"], r["limit"], r["used"]) for r in refusals} == {("messages_per_day", 10, 10)}
    assert Turn.objects.filter(conversation__player=player).count() == 10
    sessions = [str(c.id) for c in chats]
    assert Message.objects.filter(session_id__in=sessions, role="user").count() == 10
    assert QuotaCounter.objects.get(player=player, period="day").messages == 10


def test_a_refused_turn_stores_nothing_and_says_when_to_come_back(player, give_plan, conversations):
    give_plan(player, messages_per_day=1)
    first, second = conversations(2)
    begin_turn(first, "c-1", "Hello")
    with pytest.raises(QuotaExceeded) as caught:
        begin_turn(second, "c-2", "Hello again")
    assert caught.value.code == "quota_exceeded"
    details = caught.value.details
    assert details["limit"] == 1 and details["used"] == 1
    assert details["retry_at"].endswith("T00:00:00Z") and details["retry_after"] > 0
    assert not Turn.objects.filter(conversation=second).exists()
    assert not Message.objects.filter(session_id=str(second.id)).exists()


def test_a_repeated_client_id_is_not_counted_twice(player, give_plan, conversation):
    give_plan(player, messages_per_day=5)
    begin_turn(conversation, "c-1", "Hello")
    again = begin_turn(conversation, "c-1", "Hello")
    assert again.duplicate
    assert usage_summary(player).messages_today.used == 1


def test_tokens_over_the_day_or_month_refuse_the_next_turn(player, give_plan, tenant):
    from roleplay.quotas.charging import charge

    plan = give_plan(player, tokens_per_day=100, tokens_per_month=150)
    now = datetime(2026, 3, 5, 12, tzinfo=UTC)
    admit_player(tenant.pk, player.pk, now=now)
    charge(120, player_id=player.pk, now=now)
    with pytest.raises(QuotaExceeded) as caught:
        admit_player(tenant.pk, player.pk, now=now)
    assert caught.value.details["quota"] == "tokens_per_day"
    tomorrow = datetime(2026, 3, 6, 1, tzinfo=UTC)
    admit_player(tenant.pk, player.pk, now=tomorrow)  # a new day
    charge(40, player_id=player.pk, now=tomorrow)
    with pytest.raises(QuotaExceeded) as caught:
        admit_player(tenant.pk, player.pk, now=tomorrow)
    assert caught.value.details["quota"] == "tokens_per_month"
    assert caught.value.details["retry_at"] == "2026-04-01T00:00:00Z"
    assert plan.tokens_per_month == 150


def test_without_a_plan_turns_are_counted_but_never_refused(player, conversations):
    for i, conversation in enumerate(conversations(3)):
        begin_turn(conversation, f"c-{i}", "Hello")
    summary = usage_summary(player)
    assert summary.plan is None
    assert summary.messages_today.text == "today: 3 messages (no limit)"


def test_the_route_default_then_the_tenant_default_apply(tenant, player, make_plan):
    from roleplay.quotas import services
    from roleplay.quotas.selectors import plan_of

    none_plan = make_plan("Guests", messages_per_day=3)
    services.set_default(tenant, "none", none_plan)
    assert plan_of(player) == none_plan  # an integrator's player: no account
    given = make_plan("Gold", messages_per_day=300)
    services.assign_plan(player, given)
    assert plan_of(player) == given
    services.assign_plan(player, None)
    assert plan_of(player) == none_plan
