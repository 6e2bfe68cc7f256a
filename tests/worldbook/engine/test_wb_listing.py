"""The editor's list over plain rows: search, every filter, every sort, totals and paging."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from worldbook.engine.listing import EntryQuery, groups_of, make_row, page_of, select_rows


def _entry(entry_id, **fields):
    base = {
        "id": entry_id,
        "title": "",
        "content": "",
        "keys": [],
        "secondary_keys": [],
        "enabled": True,
        "position": "before_character",
        "kind": "lore",
        "group": "",
        "order": 0,
        "runtime_requirements": [],
    }
    return {**base, **fields}


ROWS = [
    make_row("a", _entry("a", title="Harbour", content="Bells at dawn", keys=["bell"]), 5, 1),
    make_row(
        "b",
        _entry("b", title="fog", keys=["/fo+g/i"], enabled=False, order=9, group="weather,sea"),
        3,
        2,
    ),
    make_row(
        "c",
        _entry("c", title="Lamps", secondary_keys=["Gas"], position="at_depth", kind="rule"),
        7,
        None,
        "edited",
    ),
    make_row("d", _entry("d", title="EJS", runtime_requirements=["ejs"], group="sea"), 1, 1),
]


def keys(query: EntryQuery) -> list[str]:
    return [row.key for row in select_rows(ROWS, query)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, ["a", "b", "c", "d"]),
        ({"q": "BELL"}, ["a"]),  # keys, case-insensitive
        ({"q": "gas"}, ["c"]),  # secondary keys
        ({"q": "harbour dawn"}, ["a"]),  # comment (title) and content, every word
        ({"q": "harbour fog"}, []),
        ({"enabled": "no"}, ["b"]),
        ({"enabled": "yes"}, ["a", "c", "d"]),
        ({"position": "at_depth"}, ["c"]),
        ({"kind": "rule"}, ["c"]),
        ({"group": "sea"}, ["b", "d"]),
        ({"group": "-"}, ["a", "c"]),
        ({"regex": "yes"}, ["b"]),
        ({"blocked": "yes"}, ["d"]),
        ({"blocked": "no", "regex": "no"}, ["a", "c"]),
    ],
)
def test_search_and_filters(query, expected):
    assert keys(EntryQuery(**query)) == expected


@pytest.mark.parametrize(
    ("sort", "direction", "expected"),
    [
        ("book", "desc", ["d", "c", "b", "a"]),
        ("order", "desc", ["b", "a", "c", "d"]),  # ties keep book order
        ("title", "asc", ["d", "b", "a", "c"]),
        ("tokens", "asc", ["d", "b", "a", "c"]),
        ("updated", "desc", ["c", "b", "a", "d"]),  # the draft's change is the newest
    ],
)
def test_sorting(sort, direction, expected):
    assert keys(EntryQuery(sort=sort, dir=direction)) == expected


def test_totals_of_the_book_and_of_the_filter():
    page = page_of(ROWS, EntryQuery(group="sea"))
    assert (page.total, page.total_tokens) == (4, 16)
    assert (page.matched, page.matched_tokens) == (2, 4)
    assert groups_of(ROWS) == ["sea", "weather"]


@given(count=st.integers(0, 130), per=st.sampled_from([25, 50, 100]), page=st.integers(1, 9))
def test_pages_cover_every_row_once(count, per, page):
    rows = [make_row(str(i), _entry(str(i)), 1, 1) for i in range(count)]
    shown = page_of(rows, EntryQuery(per=per, page=page))
    pages = [page_of(rows, EntryQuery(per=per, page=n)).rows for n in range(1, shown.pages + 1)]
    assert [row.key for chunk in pages for row in chunk] == [row.key for row in rows]
    assert shown.number == min(page, shown.pages)
    if shown.rows:
        assert shown.rows[0] is rows[shown.first - 1] and shown.last - shown.first + 1 == len(
            shown.rows
        )


def test_unknown_query_values_are_refused():
    with pytest.raises(ValidationError):
        EntryQuery(sort="random")
    with pytest.raises(ValidationError):
        EntryQuery(per=7)
    with pytest.raises(ValidationError):
        EntryQuery(colour="red")


def test_params_keep_only_what_differs_from_the_defaults():
    assert EntryQuery(q="x", page=3).params(page=1) == {"q": "x"}
