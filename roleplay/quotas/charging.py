"""Tokens charged to players: every model call's recorded usage is added to the day's and the
month's counters of the player it was made for (the player of its turn's conversation, or
the player the caller named), in one upsert. The gateway calls :func:`charge_call` where it
writes the call's ``ModelCall`` row (``roleplay.llm.gateway.USAGE_HOOKS``), in the same
transaction when the row is written with the turn's reply."""

from __future__ import annotations

from datetime import datetime
from functools import cache

from django.utils import timezone

from console.models import Player
from console.rows import prepared
from roleplay.models import Conversation, Turn

from .engine.periods import day_of, month_of
from .models import QuotaCounter


@cache
def _charge_sql(by_turn: bool) -> str:
    counter = QuotaCounter._meta.db_table
    if by_turn:
        owner = f"""
            SELECT c.tenant_id, c.player_id FROM {Conversation._meta.db_table} c
            JOIN {Turn._meta.db_table} t ON t.conversation_id = c.id WHERE t.id = %(owner)s::uuid
        """
    else:
        owner = f"""SELECT pl.tenant_id, pl.id AS player_id FROM {Player._meta.db_table} pl
            WHERE pl.id = %(owner)s::bigint"""
    return f"""
        INSERT INTO {counter} AS q (tenant_id, player_id, period, starts_on, messages, tokens)
        SELECT o.tenant_id, o.player_id, p.period, p.starts_on, 0, %(tokens)s::bigint
        FROM ({owner}) o,
            (VALUES ('day', %(day)s::date), ('month', %(month)s::date)) AS p(period, starts_on)
        ON CONFLICT (player_id, period, starts_on) DO UPDATE SET tokens = q.tokens + EXCLUDED.tokens
    """


def charge(tokens: int, *, turn_id=None, player_id=None, now: datetime | None = None) -> None:
    """Add ``tokens`` to the counters of the turn's player (or of ``player_id``); nothing
    when there are none, or no one to charge."""
    if tokens <= 0 or (turn_id is None and player_id is None):
        return
    now = now or timezone.now()
    by_turn = turn_id is not None
    params = {
        "owner": str(turn_id) if by_turn else int(player_id),
        "tokens": int(tokens),
        "day": day_of(now),
        "month": month_of(now),
    }
    with prepared(_charge_sql(by_turn), params):
        pass


def charge_call(call, player_id=None) -> None:
    """Charge a written ``ModelCall``'s tokens (input and output) to its player."""
    tokens = call.total_tokens or (call.input_tokens or 0) + (call.output_tokens or 0)
    charge(tokens, turn_id=call.turn_id, player_id=player_id)
