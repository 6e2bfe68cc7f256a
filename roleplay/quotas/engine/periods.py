"""The counting periods (UTC days and months) and when a refused player may go on.

Pure: plain dates and datetimes in, plain values out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

UNLIMITED = 2**62
"""What a null limit compares against in SQL: more than any counter reaches."""


def day_of(now: datetime) -> date:
    """The UTC day ``now`` counts in."""
    return now.astimezone(UTC).date()


def month_of(now: datetime) -> date:
    """The first day of the UTC month ``now`` counts in."""
    return day_of(now).replace(day=1)


def next_day(now: datetime) -> datetime:
    """The start of the next UTC day: when a day's quota is new again."""
    return datetime.combine(day_of(now) + timedelta(days=1), time(), tzinfo=UTC)


def next_month(now: datetime) -> datetime:
    """The start of the next UTC month."""
    first = month_of(now)
    following = date(first.year + first.month // 12, first.month % 12 + 1, 1)
    return datetime.combine(following, time(), tzinfo=UTC)


def limit_or_unlimited(limit: int | None) -> int:
    """A limit as SQL compares it (null: unlimited)."""
    return UNLIMITED if limit is None else limit


@dataclass(frozen=True)
class Refusal:
    """What a refused turn tells the player: which limit, its value, what was used and when
    the period starts again."""

    limit_name: str
    limit: int
    used: int
    retry_at: datetime

    def details(self, now: datetime) -> dict:
        wait = max(1, int((self.retry_at - now).total_seconds()) + 1)
        return {
            "quota": self.limit_name,
            "limit": self.limit,
            "used": self.used,
            "retry_at": self.retry_at.isoformat().replace("+00:00", "Z"),
            "retry_after": wait,
        }


def refusal(
    now: datetime,
    *,
    messages_per_day: int | None,
    tokens_per_day: int | None,
    tokens_per_month: int | None,
    messages_today: int,
    tokens_today: int,
    tokens_month: int,
) -> Refusal | None:
    """The first limit the player is at (None: none is): the one rule of what a turn may
    start on, which the admission's SQL condition follows."""
    if messages_per_day is not None and messages_today >= messages_per_day:
        return Refusal("messages_per_day", messages_per_day, messages_today, next_day(now))
    if tokens_per_day is not None and tokens_today >= tokens_per_day:
        return Refusal("tokens_per_day", tokens_per_day, tokens_today, next_day(now))
    if tokens_per_month is not None and tokens_month >= tokens_per_month:
        return Refusal("tokens_per_month", tokens_per_month, tokens_month, next_month(now))
    return None


def capped(value: int | None, cap: int | None) -> int | None:
    """``value`` no larger than ``cap`` (either None: the other)."""
    if cap is None:
        return value
    return cap if value is None else min(value, cap)
