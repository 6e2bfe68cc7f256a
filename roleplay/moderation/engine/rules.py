"""A tenant's moderation rules and how a text is judged by them (pure: no Django).

The policy names categories; each has an action and, optionally, operator keyword and
regex lists. A text is matched by those lists (keywords case-insensitively as whole words,
regexes through RE2, linear in the text so a pattern cannot hang a turn), and the
categories a ``/moderations`` endpoint flagged are added; the decision is the most severe
action among the categories found (``ACTIONS`` order). An endpoint category the policy does
not name gets ``endpoint_action``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import re2
from pydantic import BaseModel, ConfigDict, Field, field_validator

Action = Literal["allow", "warn", "block_input", "hide_reply"]
# Least to most severe: the decision is the most severe action of the categories found.
ACTIONS: tuple[str, ...] = ("allow", "warn", "hide_reply", "block_input")
MAX_CATEGORIES = 50
MAX_TERMS = 500
MAX_TERM = 200
EXCERPT_CHARS = 80


class CategoryRule(BaseModel):
    """One category: what happens when it is found, and the operator's lists for it."""

    model_config = ConfigDict(extra="forbid")

    action: Action = "warn"
    keywords: list[str] = Field(default_factory=list, max_length=MAX_TERMS)
    patterns: list[str] = Field(default_factory=list, max_length=MAX_TERMS)

    @field_validator("keywords", "patterns")
    @classmethod
    def _terms(cls, terms: list[str]) -> list[str]:
        cleaned = [t.strip() for t in terms if t.strip()]
        if any(len(t) > MAX_TERM for t in cleaned):
            raise ValueError(f"a term is longer than {MAX_TERM} characters")
        return cleaned

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re2.compile(pattern)
            except re2.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
        return patterns


class Rules(BaseModel):
    """The policy's rules: ``categories`` by name, ``endpoint_action`` for the rest."""

    model_config = ConfigDict(extra="forbid")

    categories: dict[str, CategoryRule] = Field(default_factory=dict, max_length=MAX_CATEGORIES)
    endpoint_action: Action = "warn"


@dataclass(frozen=True)
class Decision:
    """What to do with a text: the action and the categories that led to it."""

    action: str
    categories: tuple[str, ...]

    @property
    def category(self) -> str:
        return self.categories[0] if self.categories else ""


ALLOW = Decision("allow", ())


def parse(data: dict | None) -> Rules:
    """The rules stored as JSON (raises pydantic's ValidationError on a bad shape)."""
    return Rules.model_validate(data or {})


def matched(text: str, rules: Rules) -> list[str]:
    """The categories whose keyword or regex lists match ``text``."""
    found = []
    for name, rule in rules.categories.items():
        if _matcher(tuple(rule.keywords), tuple(rule.patterns))(text):
            found.append(name)
    return found


@lru_cache(maxsize=256)
def _matcher(keywords: tuple[str, ...], patterns: tuple[str, ...]):
    """One RE2 program for a category's keywords (whole words, any case) and patterns."""
    parts = [rf"\b{re.escape(k)}\b" for k in keywords] + [f"(?:{p})" for p in patterns]
    if not parts:
        return lambda text: False
    options = re2.Options()
    options.case_sensitive = False
    compiled = re2.compile("|".join(parts), options)
    return lambda text: compiled.search(text) is not None


def decide(rules: Rules, listed: list[str], flagged: list[str]) -> Decision:
    """The most severe action among the categories the lists matched (``listed``) and
    those an endpoint flagged (``flagged``); ``allow`` when none."""
    actions: dict[str, str] = {}
    for name in listed:
        actions[name] = rules.categories[name].action
    for name in flagged:
        rule = rules.categories.get(name)
        actions.setdefault(name, rule.action if rule else rules.endpoint_action)
    if not actions:
        return ALLOW
    worst = max(actions.values(), key=ACTIONS.index)
    if worst == "allow":
        return Decision("allow", tuple(actions))
    first = tuple(n for n, a in actions.items() if a == worst)
    return Decision(worst, first + tuple(n for n in actions if n not in first))


def blocks_input(decision: Decision) -> bool:
    return decision.action == "block_input"


def hides_reply(decision: Decision) -> bool:
    """A reply found in a category that blocks inputs is hidden too."""
    return decision.action in ("hide_reply", "block_input")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def redacted(text: str, limit: int = EXCERPT_CHARS) -> str:
    """A short excerpt for review that keeps no word whole: each word's first letter and
    its length (``"kill them"`` → ``"k··· t···"``), so the reviewer sees the shape only."""
    words = text.split()
    shown = " ".join(w[0] + "·" * min(len(w) - 1, 8) for w in words)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
