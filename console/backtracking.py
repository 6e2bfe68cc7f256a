"""Patterns RE2 cannot run (look-around, back-references), run by the backtracking ``regex``
module under a time limit: what regex scripts and the worldbook's regex keys both use when
a SillyTavern pattern needs one of those.

RE2 runs in time linear in the text, so it stays the engine of every pattern it accepts.
:func:`compile_backtracking` takes only a pattern whose size RE2 would accept too: with its
look-arounds read as plain groups and its back-references left out, RE2 must compile it (a
nested repetition such as ``((a{100}){100}){100}`` takes the ``regex`` module most of a
second to compile, and is refused). Each search has a deadline (:class:`Backtracking`); one
past it raises :class:`TimedOut`, and a pattern that ran out of time :data:`MAX_TIMEOUTS`
times is not run again by this process (it raises at once: a catastrophic pattern costs
each text its budget only until it has shown itself).
"""

from __future__ import annotations

import re
import time

import re2
import regex

MAX_TIMEOUTS = 3
FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL}
# What only a backtracking engine runs: look-around (group 2) and back-references; an escaped
# backslash (group 1) is kept as it is.
_BACKTRACKING_ONLY = re.compile(r"(\\\\)|(\(\?<?[=!])|\\[1-9][0-9]*|\\k<[A-Za-z_]\w*>")
_RE2 = re2.Options()
_RE2.log_errors = False
_RE2.max_mem = 8 << 20


class TimedOut(Exception):
    """A search ran past its deadline (or the pattern ran out of time too often before)."""


class Backtracking:
    """A compiled ``regex`` pattern whose searches take a deadline (``time.monotonic()``):
    ``search``/``match`` as RE2's, ``groups`` and ``groupindex`` as ``re``'s."""

    __slots__ = ("budget_s", "groupindex", "groups", "pattern", "timeouts")

    def __init__(self, pattern: regex.Pattern, budget_s: float) -> None:
        self.pattern = pattern
        self.budget_s = budget_s  # a search without a deadline has this long
        self.groups = pattern.groups
        self.groupindex = dict(pattern.groupindex)
        self.timeouts = 0  # searches past their deadline so far (in this process)

    def search(self, text: str, pos: int = 0, deadline: float | None = None):
        return self._run(self.pattern.search, text, pos, deadline)

    def match(self, text: str, pos: int = 0, deadline: float | None = None):
        return self._run(self.pattern.match, text, pos, deadline)

    def _run(self, find, text: str, pos: int, deadline: float | None):
        left = self.budget_s if deadline is None else deadline - time.monotonic()
        if self.timeouts >= MAX_TIMEOUTS or left <= 0:
            raise TimedOut
        try:
            return find(text, pos, timeout=left)
        except TimeoutError:
            self.timeouts += 1
            raise TimedOut from None


def compile_backtracking(
    linear_source: str, source: str, flags: int, budget_s: float
) -> Backtracking:
    """``source`` compiled by ``regex`` (``V0`` with ``flags``), given that
    ``linear_source`` (the same pattern as RE2 spells it) is within RE2's bounds once its
    backtracking-only parts are set aside; raises ``ValueError`` (``re2.error`` or
    ``regex.error`` among them) otherwise."""
    try:
        re2.compile(_BACKTRACKING_ONLY.sub(_as_linear, linear_source), _RE2)
        return Backtracking(regex.compile(source, regex.V0 | flags), budget_s)
    except (re2.error, regex.error, TypeError, OverflowError, RecursionError) as exc:
        raise ValueError(error_text(exc)) from exc


def _as_linear(found: re.Match[str]) -> str:
    return found.group(1) or ("(?:" if found.group(2) else "")


def error_text(exc: BaseException) -> str:
    """What a regex engine's error says (RE2 gives bytes)."""
    detail = exc.args[0] if exc.args else exc
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
