"""``console.numbers``: the one reading of an integer a page is sent (query string, form)."""

from __future__ import annotations

import pytest

from console.numbers import page_number, parse_int


@pytest.mark.parametrize(
    ("value", "expected"),
    [("7", 7), (" 7 ", 7), ("-3", -3), (12, 12), ("x", None), ("", None), (None, None),
     ("1.5", None), (True, None)],
)  # fmt: skip
def test_parse_int(value, expected):
    assert parse_int(value) == expected


def test_default_and_floor():
    assert parse_int("0", 5, low=1) == 5
    assert parse_int("3", 5, low=1) == 3
    assert parse_int("abc", "abc") == "abc"  # a caller may keep what was sent


@pytest.mark.parametrize(
    ("value", "expected"), [("2", 2), ("0", 1), ("-4", 1), ("z", 1), (None, 1)]
)
def test_page_number(value, expected):
    assert page_number(value) == expected
