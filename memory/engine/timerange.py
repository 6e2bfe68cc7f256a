"""The time a question points at, as a range of dates (pure).

Real questions name time by the calendar ("in May 2023", "last May") or relative to now
("last week", "three days ago") or to another event ("the week before the trip"). Each
message is stored with its session's time, so a range found here lets recall favour the
turns said inside it (``search`` boosts them; the words still decide among them).

- :func:`absolute` reads a month (with or without a year), a year, "yesterday", "last
  week/month/year", "N days/weeks/months ago", against ``now`` (the latest time of the
  player's talk, not the clock: an old conversation is asked about in its own time). A
  month without a year is its latest occurrence up to ``now``.
- :func:`anchored` reads "the day/week/month before/after <event>": the window and the
  event's words, whose own best hit's time makes the range (:func:`around`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}  # fmt: skip
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
SPANS = {"day": 1, "week": 7, "weekend": 3, "month": 31, "year": 366}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_MONTH_RE = re.compile(rf"\b(?:last\s+)?({_MONTH})\b(?:[\s,]+(\d{{4}}))?", re.IGNORECASE)
_YEAR_RE = re.compile(r"\b(?:in|during|of)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_AGO_RE = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago\b", re.I
)
_LAST_RE = re.compile(r"\b(?:last|past|previous)\s+(week|weekend|month|year)\b", re.I)
_ANCHOR_RE = re.compile(
    r"\b(?:the\s+)?(day|week|weekend|month|year)\s+(before|after)\s+(.+?)(?:[?.!,;]|$)", re.I
)


@dataclass(frozen=True)
class Range:
    start: datetime
    end: datetime

    def holds(self, when: datetime) -> bool:
        return self.start <= when < self.end


@dataclass(frozen=True)
class Anchor:
    """A window of ``days`` before (``sign`` -1) or after (+1) the event ``words`` name."""

    words: str
    days: int
    sign: int


def _month(month: int, year: int) -> Range:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return Range(start, end)


def absolute(question: str, now: datetime) -> Range | None:
    """The range the question names by the calendar or relative to ``now``, or None."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    found = _AGO_RE.search(question)
    if found:
        count = NUMBERS.get(found.group(1).lower()) or int(found.group(1))
        days = count * SPANS[found.group(2).lower()]
        slack = max(1, days // 4)
        return Range(day - timedelta(days=days + slack), day - timedelta(days=days - slack - 1))
    if re.search(r"\byesterday\b", question, re.I):
        return Range(day - timedelta(days=1), day)
    found = _LAST_RE.search(question)
    if found:
        return Range(day - timedelta(days=SPANS[found.group(1).lower()] * 2), day)
    found = _MONTH_RE.search(question)
    if found and not _is_modal_may(question, found):
        month = MONTHS[found.group(1).lower()]
        if found.group(2):
            return _month(month, int(found.group(2)))
        year = now.year if month <= now.month else now.year - 1
        return _month(month, year)
    found = _YEAR_RE.search(question)
    if found:
        year = int(found.group(1))
        return Range(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
    return None


def _is_modal_may(question: str, found: re.Match) -> bool:
    """ "May" the verb ("may have", "what may she"), not the month: lower case, or
    followed by no year and not after "in"/"last"/"of"."""
    word = found.group(1)
    if word.lower() != "may" or found.group(2):
        return False
    if word == "may":
        return True
    before = question[: found.start()].split()[-1:]
    return not (before and before[0].lower() in ("in", "of", "since", "during"))


def anchored(question: str) -> Anchor | None:
    """ "the week before <event>" and its like, or None."""
    found = _ANCHOR_RE.search(question)
    if not found:
        return None
    words = found.group(3).strip()
    if not words:
        return None
    sign = -1 if found.group(2).lower() == "before" else 1
    return Anchor(words, SPANS[found.group(1).lower()], sign)


def around(anchor: Anchor, when: datetime) -> Range:
    """The anchor's window next to ``when`` (the event's time), the event's day included."""
    day = when.replace(hour=0, minute=0, second=0, microsecond=0)
    if anchor.sign < 0:
        return Range(day - timedelta(days=anchor.days), day + timedelta(days=1))
    return Range(day, day + timedelta(days=anchor.days + 1))
