"""The one check at the start of every turn: which plan applies, and one more message
counted if the player is under its limits, in one statement.

The statement resolves the player's plan (their assignment, else the default of the route
their account came by, else the tenant's default for players without an account) and
counts the turn with one conditional upsert of the day's counter: ``INSERT ... ON CONFLICT
DO UPDATE ... WHERE messages < limit AND tokens < limit RETURNING``. PostgreSQL locks the
counter row for the update and evaluates the condition on its newest version, so concurrent
turns are counted exactly (no read-then-write). A refusal answers no row; only then are the
counters read again, to tell the player what they used (``engine.periods.refusal``).

It runs inside the turn's first transaction (``turns.records``): a turn refused for its
quota, or for a model config its plan does not allow, stores nothing, and a turn refused for
another reason (``turn_in_progress``, a repeated client id) is not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.db import transaction
from django.utils import timezone

from console.rows import prepared
from roleplay.llm.gateway import resolve_config
from roleplay.models import PlayerAccount

from .engine.periods import UNLIMITED, day_of, month_of, refusal
from .errors import FeatureNotAllowed, ModelConfigNotAllowed, QuotaExceeded
from .models import Plan, PlanAssignment, PlanDefault, QuotaCounter


@dataclass(frozen=True)
class Admission:
    """What an admitted turn may ask of the model (None: no cap), and the plan's features
    (None: no plan, everything allowed)."""

    plan_id: str | None = None
    max_reply_tokens: int | None = None
    max_context_tokens: int | None = None
    features: tuple[str, ...] | None = None

    def allows(self, feature: str) -> bool:
        return self.features is None or feature in self.features


UNLIMITED_ADMISSION = Admission()


@cache
def plan_sql(player: str = "%s", tenant: str = "%s") -> str:
    """The plan of ``player`` of ``tenant`` (SQL expressions), as a query of plan rows."""
    t = {m: m._meta.db_table for m in (Plan, PlanAssignment, PlanDefault, PlayerAccount)}
    return f"""
        SELECT p.* FROM {t[Plan]} p WHERE p.id = COALESCE(
            (SELECT a.plan_id FROM {t[PlanAssignment]} a WHERE a.player_id = {player}),
            (SELECT d.plan_id FROM {t[PlanDefault]} d WHERE d.tenant_id = {tenant}
                AND d.route = COALESCE((SELECT pa.route FROM {t[PlayerAccount]} pa
                    WHERE pa.player_id = {player}), 'none')))
    """


@cache
def _admit_sql() -> str:
    counter = QuotaCounter._meta.db_table
    configs = Plan.model_configs.through._meta.db_table
    unlimited = str(UNLIMITED)
    room = f"""
        COALESCE((SELECT tokens FROM month), 0)
            < COALESCE((SELECT tokens_per_month FROM plan), {unlimited})"""
    return f"""
        WITH plan AS ({plan_sql("%(player)s::bigint", "%(tenant)s::uuid")}),
        month AS (
            SELECT tokens FROM {counter} WHERE player_id = %(player)s::bigint
            AND period = 'month' AND starts_on = %(month)s::date
        ),
        admitted AS (
            INSERT INTO {counter} AS q (tenant_id, player_id, period, starts_on, messages, tokens)
            SELECT %(tenant)s::uuid, %(player)s::bigint, 'day', %(day)s::date, 1, 0
            WHERE COALESCE((SELECT messages_per_day FROM plan), {unlimited}) > 0
              AND COALESCE((SELECT tokens_per_day FROM plan), {unlimited}) > 0 AND {room}
            ON CONFLICT (player_id, period, starts_on) DO UPDATE SET messages = q.messages + 1
            WHERE q.messages < COALESCE((SELECT messages_per_day FROM plan), {unlimited})
              AND q.tokens < COALESCE((SELECT tokens_per_day FROM plan), {unlimited}) AND {room}
            RETURNING q.messages
        )
        SELECT a.messages, p.id, p.max_reply_tokens, p.max_context_tokens, p.features,
            CASE WHEN p.id IS NULL THEN NULL ELSE ARRAY(
                SELECT m.modelconfig_id FROM {configs} m WHERE m.plan_id = p.id) END
        FROM (SELECT 1) one LEFT JOIN admitted a ON TRUE LEFT JOIN plan p ON TRUE
    """


def admit_player(tenant_id, player_id, *, now: datetime | None = None) -> tuple[Admission, list]:
    """Count one turn of the player (raising ``QuotaExceeded`` when at a limit); the
    admission and the plan's allowed model config ids (empty: all)."""
    now = now or timezone.now()
    params = {
        "tenant": str(tenant_id),
        "player": int(player_id),
        "day": day_of(now),
        "month": month_of(now),
    }
    with prepared(_admit_sql(), params) as cursor:
        counted, plan_id, reply_cap, context_cap, features, configs = cursor.fetchone()
    if counted is None:
        raise _refused(player_id, plan_id, now)
    if plan_id is None:
        return UNLIMITED_ADMISSION, []
    admission = Admission(str(plan_id), reply_cap, context_cap, tuple(features or ()))
    return admission, list(configs or [])


def admit(conversation, *, feature: str | None = None, now: datetime | None = None) -> Admission:
    """Admit a turn of ``conversation``: counted, or refused with ``quota_exceeded``; a model
    config the plan does not allow is ``model_config_not_allowed``, a feature it does not
    allow ``feature_not_allowed``. Call it inside the turn's transaction."""
    admission, configs = admit_player(conversation.tenant_id, conversation.player_id, now=now)
    if configs:
        config = resolve_config(conversation.tenant, conversation=conversation,
                                character=conversation.character)  # fmt: skip
        if config is None or config.pk not in configs:
            name = config.name if config is not None else "the default model"
            raise ModelConfigNotAllowed(
                message=f"your plan does not allow {name}",
                details={"model_config": str(config.pk) if config is not None else None},
            )
    if feature is not None and not admission.allows(feature):
        raise FeatureNotAllowed(
            message=f"your plan does not allow {feature}", details={"feature": feature}
        )
    return admission


def admit_alone(conversation, *, feature: str | None = None) -> Admission:
    """:func:`admit` in a transaction of its own: a model call that is no turn's (an
    auto-reply's suggestions) is counted like a turn."""
    with transaction.atomic():
        return admit(conversation, feature=feature)


def _refused(player_id, plan_id, now: datetime) -> QuotaExceeded:
    plan = Plan.objects.filter(pk=plan_id).first() if plan_id is not None else None
    rows = QuotaCounter.objects.filter(
        player_id=player_id, starts_on__in=[day_of(now), month_of(now)]
    ).values_list("period", "starts_on", "messages", "tokens")
    counters = {(period, day): (messages, tokens) for period, day, messages, tokens in rows}
    today = counters.get(("day", day_of(now)), (0, 0))
    month = counters.get(("month", month_of(now)), (0, 0))
    found = refusal(
        now,
        messages_per_day=plan.messages_per_day if plan else None,
        tokens_per_day=plan.tokens_per_day if plan else None,
        tokens_per_month=plan.tokens_per_month if plan else None,
        messages_today=today[0],
        tokens_today=today[1],
        tokens_month=month[1],
    )
    if found is None:  # the period turned between the two reads: the count was the limit
        limit = plan.messages_per_day if plan and plan.messages_per_day is not None else 0
        found = refusal(now, messages_per_day=limit, tokens_per_day=None,
                        tokens_per_month=None, messages_today=limit, tokens_today=0,
                        tokens_month=0)  # fmt: skip
    assert found is not None
    words = {
        "messages_per_day": f"You have used your {found.limit} messages for today.",
        "tokens_per_day": f"You have used your {found.limit} tokens for today.",
        "tokens_per_month": f"You have used your {found.limit} tokens for this month.",
    }[found.limit_name]
    return QuotaExceeded(message=words, details=found.details(now))
