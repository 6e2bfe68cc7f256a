"""Checking a state the Director wrote (seed 002: a complete replacement, never a patch).

A candidate is valid when, stripped of surrounding whitespace, it starts with the state
header, holds every section label of ``roleplay.prompting.director_state`` in order, is at
least :data:`MIN_STATE_CHARS` and at most the scenario's ``maxStateChars`` characters long,
and carries no reasoning tags (``<think>`` and the like: the model's scratchpad is never
state). A valid candidate equal to the old state is ``unchanged``: no new revision. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from roleplay.prompting.director_state import DIRECTOR_STATE_HEADER, state_format_problems

MIN_STATE_CHARS = 500
REASONING_TAG = re.compile(
    r"</?\s*(think|thinking|thought|reasoning|reflection|scratchpad|analysis)\b[^>]*>",
    re.IGNORECASE,
)

OK, UNCHANGED = "ok", "unchanged"
EMPTY, TOO_SHORT, TOO_LONG = "empty", "too_short", "too_long"
NO_HEADER, SECTIONS, REASONING = "no_header", "sections", "reasoning_tags"


@dataclass(frozen=True)
class Verdict:
    """``code`` is :data:`OK`, :data:`UNCHANGED` or why the candidate is invalid; ``text``
    the candidate as it would be stored (stripped)."""

    code: str
    message: str = ""
    text: str = ""

    @property
    def valid(self) -> bool:
        return self.code in (OK, UNCHANGED)


def check_candidate(candidate: str, *, old: str | None, max_chars: int) -> Verdict:
    text = (candidate or "").strip()
    if not text:
        return Verdict(EMPTY, "the Director wrote nothing")
    if len(text) < MIN_STATE_CHARS:
        return Verdict(TOO_SHORT, f"{len(text)} characters, fewer than {MIN_STATE_CHARS}")
    if len(text) > max_chars:
        return Verdict(TOO_LONG, f"{len(text)} characters, more than maxStateChars {max_chars}")
    if not text.startswith(DIRECTOR_STATE_HEADER):
        return Verdict(NO_HEADER, f"the state does not start with {DIRECTOR_STATE_HEADER}")
    found = REASONING_TAG.search(text)
    if found:
        return Verdict(REASONING, f"the state holds a reasoning tag {found.group(0)!r}")
    problems = state_format_problems(text)
    if problems:
        return Verdict(SECTIONS, problems)
    if old is not None and text == old.strip():
        return Verdict(UNCHANGED, "the state is the same as before", text)
    return Verdict(OK, "", text)
