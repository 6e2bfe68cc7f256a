"""Lorebook scopes (``worldbook.engine.scopes``): SillyTavern's order between scopes per
``world_info_character_strategy``, one read per book, the deterministic cut past 20 books,
and the tiers' effect on the engine's budgets and placement."""

from __future__ import annotations

import pytest

from tests.worldbook.engine.wbsel_helpers import book, loaded, select
from worldbook.engine import scopes
from worldbook.engine.schema import SelectRequest
from worldbook.engine.scopes import ScopedBook, choose


def _bound() -> list[ScopedBook]:
    return [
        ScopedBook("global", 0, "g1"),
        ScopedBook("prompt", 0, "c1"),
        ScopedBook("scenario", 0, "s1"),
        ScopedBook("persona", 0, "p1"),
        ScopedBook("chat", 0, "h1"),
        ScopedBook("prompt", 1, "c2"),
    ]


@pytest.mark.parametrize(
    ("strategy", "order"),
    [
        # chat lore, then persona lore, always first (SillyTavern's getSortedEntries)
        ("character_first", ["h1", "p1", "c1", "c2", "g1", "s1"]),
        ("global_first", ["h1", "p1", "g1", "s1", "c1", "c2"]),
        # one pool: the character's and the global books share a tier
        ("evenly", ["h1", "p1", "c1", "c2", "g1", "s1"]),
    ],
)
def test_books_in_scope_order_per_strategy(strategy, order):
    chosen = choose(_bound(), strategy)
    assert [b.book_id for b, _tier in chosen.books] == order
    assert chosen.cut == []


def test_tiers_per_strategy():
    assert [scopes.tier(s, "evenly") for s in scopes.SCOPES] == [0, 1, 2, 2, 2]
    assert [scopes.tier(s, "character_first") for s in scopes.SCOPES] == [0, 1, 2, 3, 3]
    assert [scopes.tier(s, "global_first") for s in scopes.SCOPES] == [0, 1, 3, 2, 2]


def test_a_book_in_two_scopes_is_read_once_in_its_first_scope():
    bound = [ScopedBook("prompt", 0, "x"), ScopedBook("chat", 5, "x"), ScopedBook("global", 0, "y")]
    chosen = choose(bound, "global_first")
    assert [(b.scope, b.book_id) for b, _ in chosen.books] == [("chat", "x"), ("global", "y")]


def test_past_the_limit_the_cut_is_deterministic():
    bound = [ScopedBook("global", n, f"g{n:02}") for n in range(15)]
    bound += [ScopedBook("chat", n, f"h{n:02}") for n in range(10)]
    chosen = choose(list(reversed(bound)), "character_first")
    kept = [b.book_id for b, _ in chosen.books]
    assert len(kept) == scopes.MAX_BOOKS
    assert kept[:10] == [f"h{n:02}" for n in range(10)]
    assert [b.book_id for b in chosen.cut] == [f"g{n:02}" for n in range(10, 15)]
    assert choose(bound, "character_first") == chosen


def test_strategy_of_takes_the_first_known_choice():
    assert scopes.strategy_of(None, "global_first") == "global_first"
    assert scopes.strategy_of("evenly", "global_first") == "evenly"
    assert scopes.strategy_of("nonsense", None) == scopes.DEFAULT_STRATEGY == "character_first"
    assert scopes.ST_NUMBERS == {0: "evenly", 1: "character_first", 2: "global_first"}


def _entry(entry_id: str, order: int) -> dict:
    return {"id": entry_id, "keys": ["hello"], "content": f"lore of {entry_id}", "order": order}


def _select(strategy: str, *, chat: bool = False, max_entries: int = 1):
    """A character book (``ch``, order 10) and a global one (``gl``, order 20), and maybe a
    chat book (``ht``, order 0), at their tiers under ``strategy``."""
    books = [("ch", "prompt", 10), ("gl", "global", 20)] + ([("ht", "chat", 0)] if chat else [])
    refs = [{"book_id": b, "tier": scopes.tier(scope, strategy)} for b, scope, _ in books]
    req = SelectRequest.model_validate(
        {"books": refs, "query": "hello", "max_entries": max_entries}
    )
    loaded_books = [
        loaded(book(_entry(f"{book_id}-e", order)), book_id) for book_id, _, order in books
    ]
    return select(req, loaded_books)


@pytest.mark.parametrize(
    ("strategy", "survivor"),
    [("character_first", "ch"), ("global_first", "gl"), ("evenly", "gl")],
)
def test_the_strategy_decides_which_scope_survives_the_budget(strategy, survivor):
    # One entry fits: the first considered. Evenly, the higher order (the global's) wins.
    assert [b["book_id"] for b in _select(strategy).blocks] == [survivor]


@pytest.mark.parametrize("strategy", scopes.STRATEGIES)
def test_chat_lore_is_considered_before_every_other_scope(strategy):
    assert [b["book_id"] for b in _select(strategy, chat=True).blocks] == ["ht"]


def test_at_equal_order_the_first_evaluated_scope_is_placed_last():
    books = [("gl", "global"), ("ht", "chat")]
    refs = [{"book_id": b, "tier": scopes.tier(s, "character_first")} for b, s in books]
    req = SelectRequest.model_validate({"books": refs, "query": "hello"})
    result = select(req, [loaded(book(_entry(f"{b}-e", 5)), b) for b, _ in books])
    assert [b["book_id"] for b in result.blocks] == ["gl", "ht"]
