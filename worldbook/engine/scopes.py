"""Lorebook scopes: which bound books a turn reads, in which order, and at which tier.

A conversation's turn reads the books bound to five scopes (SillyTavern's World Info
sources, plus a scenario's own global books):

- ``chat``: books bound to this conversation (SillyTavern's chat lore);
- ``persona``: books bound to the persona the player plays (persona lore);
- ``prompt``: books bound to the character (its prompt bindings; character lore);
- ``global``: books on for every conversation of the tenant (global lore);
- ``scenario``: books on for every conversation running that scenario (global lore too).

SillyTavern evaluates entries in this order (``getSortedEntries`` in its world-info.js):
chat lore first, then persona lore, then character and global lore combined by
``world_info_character_strategy``: ``evenly`` (0, one pool sorted by order),
``character_first`` (1, SillyTavern's shipped default) or ``global_first`` (2). Here that
order is a *tier* per book (lower considered first for the budgets: ``engine.budget``;
placed later at equal ``order``: ``engine.placement``). A book bound in several scopes is
read once, in its first scope in that order; past :data:`MAX_BOOKS` books the rest are cut
in that order too, so the cut is deterministic.

Pure: plain values in, plain values out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

MAX_BOOKS: Final = 20  # the books one turn reads, every scope together

Scope = Literal["chat", "persona", "prompt", "global", "scenario"]
Strategy = Literal["evenly", "character_first", "global_first"]

SCOPES: Final[tuple[Scope, ...]] = ("chat", "persona", "prompt", "global", "scenario")
STRATEGIES: Final[tuple[Strategy, ...]] = ("evenly", "character_first", "global_first")
DEFAULT_STRATEGY: Final[Strategy] = "character_first"
# SillyTavern's numbers for the strategies (its ``world_info_character_strategy`` setting).
ST_NUMBERS: Final[dict[int, Strategy]] = {0: "evenly", 1: "character_first", 2: "global_first"}

_TIERS: Final[dict[Strategy, dict[Scope, int]]] = {
    "evenly": {"chat": 0, "persona": 1, "prompt": 2, "global": 2, "scenario": 2},
    "character_first": {"chat": 0, "persona": 1, "prompt": 2, "global": 3, "scenario": 3},
    "global_first": {"chat": 0, "persona": 1, "global": 2, "scenario": 2, "prompt": 3},
}
# Among scopes of one tier (and to pick a book's scope): this order.
_SCOPE_RANK: Final[dict[Scope, int]] = {scope: n for n, scope in enumerate(SCOPES)}


def tier(scope: Scope, strategy: Strategy) -> int:
    """The tier of a scope's books under ``strategy`` (see the module doc)."""
    return _TIERS[strategy][scope]


@dataclass(frozen=True)
class ScopedBook:
    """One enabled binding as the turn read it: its scope, its position in the scope, and
    whatever the caller keeps with it (``item``: the resolved revision)."""

    scope: Scope
    position: int
    book_id: str
    item: object = None


@dataclass(frozen=True)
class Chosen:
    """The books a turn reads (``books``, in order, with their tiers) and the ones cut past
    :data:`MAX_BOOKS` (``cut``)."""

    books: list[tuple[ScopedBook, int]]
    cut: list[ScopedBook]


def choose(bound: Iterable[ScopedBook], strategy: Strategy, limit: int = MAX_BOOKS) -> Chosen:
    """Every scope's books in tier order (then scope, position, book id), each book once (its
    first scope), at most ``limit`` of them."""

    def key(book: ScopedBook) -> tuple[int, int, int, str]:
        return (tier(book.scope, strategy), _SCOPE_RANK[book.scope], book.position, book.book_id)

    seen: set[str] = set()
    ordered: list[ScopedBook] = []
    for book in sorted(bound, key=key):
        if book.book_id not in seen:
            seen.add(book.book_id)
            ordered.append(book)
    kept = [(book, tier(book.scope, strategy)) for book in ordered[:limit]]
    return Chosen(kept, ordered[limit:])


def strategy_of(*choices: str | None) -> Strategy:
    """The first strategy given (a scenario's, then the tenant's), else the default."""
    for choice in choices:
        if choice in STRATEGIES:
            return choice  # type: ignore[return-value]
    return DEFAULT_STRATEGY
