"""Integers from a query string or a form field: one rule for every page that reads one.

Pure Python. A browser sends numbers as text, and a hand-edited URL sends anything; a page
never fails on that, it falls back to its default (a service still refuses what it must).
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

D = TypeVar("D")


@overload
def parse_int(value: object, *, low: int | None = None) -> int | None: ...
@overload
def parse_int(value: object, default: D, *, low: int | None = None) -> int | D: ...
def parse_int(value: object, default: Any = None, *, low: int | None = None) -> Any:
    """``value`` (text as Python's ``int`` reads it, or an integer) as an ``int``;
    ``default`` when it is missing, not an integer, or below ``low``."""
    if isinstance(value, bool):
        return default
    try:
        number = value if isinstance(value, int) else int(str(value))
    except ValueError:
        return default
    return default if low is not None and number < low else number


def page_number(value: object) -> int:
    """A list page's number (``?page=``): 1 unless a whole number of at least 1.
    ``Paginator.get_page`` then clamps one past the end to the last page."""
    return parse_int(value, 1, low=1)
