"""Reads of plans and usage: a tenant's plans, the plan a player is on, and what they used
(``usage_summary``: "today: 41 of 100 messages")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count
from django.utils import timezone

from console.rows import prepared

from .admission import plan_sql
from .engine.periods import day_of, month_of, next_day, next_month
from .models import ROUTES, Plan, PlanDefault, QuotaCounter


def plans(tenant):
    """The tenant's plans by name, with how many players were given each."""
    return (
        Plan.objects.filter(tenant=tenant)
        .annotate(players=Count("assignments", distinct=True))
        .prefetch_related("model_configs")
        .order_by("name")
    )


def defaults(tenant) -> dict[str, Plan | None]:
    """The default plan of each route (None: unlimited)."""
    found = {
        d.route: d.plan for d in PlanDefault.objects.filter(tenant=tenant).select_related("plan")
    }
    return {route: found.get(route) for route in ROUTES}


def plan_of(player) -> Plan | None:
    """The plan that applies to ``player`` (the admission's rule); None: unlimited."""
    with prepared(plan_sql(), [player.pk, player.tenant_id, player.pk]) as cursor:
        row = cursor.fetchone()
    return Plan.objects.filter(pk=row[0]).first() if row else None


@dataclass(frozen=True)
class Meter:
    """One quota: what was used of what limit (None: unlimited), and when it starts again."""

    label: str
    unit: str
    used: int
    limit: int | None
    resets_at: datetime

    @property
    def text(self) -> str:
        if self.limit is None:
            return f"{self.label}: {self.used} {self.unit} (no limit)"
        return f"{self.label}: {self.used} of {self.limit} {self.unit}"

    @property
    def percent(self) -> int:
        if not self.limit:
            return 100 if self.limit == 0 else 0
        return min(100, round(100 * self.used / self.limit))


@dataclass(frozen=True)
class UsageSummary:
    plan: Plan | None
    messages_today: Meter
    tokens_today: Meter
    tokens_month: Meter

    @property
    def meters(self) -> list[Meter]:
        return [self.messages_today, self.tokens_today, self.tokens_month]


def usage_summary(player, *, now: datetime | None = None) -> UsageSummary:
    """What ``player`` used today and this month, against their plan's limits."""
    now = now or timezone.now()
    plan = plan_of(player)
    rows = QuotaCounter.objects.filter(
        player=player, starts_on__in=[day_of(now), month_of(now)]
    ).values_list("period", "starts_on", "messages", "tokens")
    counters = {(period, day): (messages, tokens) for period, day, messages, tokens in rows}
    today = counters.get(("day", day_of(now)), (0, 0))
    month = counters.get(("month", month_of(now)), (0, 0))
    return UsageSummary(
        plan,
        Meter("today", "messages", today[0], plan and plan.messages_per_day, next_day(now)),
        Meter("today", "tokens", today[1], plan and plan.tokens_per_day, next_day(now)),
        Meter("this month", "tokens", month[1], plan and plan.tokens_per_month, next_month(now)),
    )
