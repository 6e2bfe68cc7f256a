"""The program's ids (``g<n>`` for goals, ``w<n>`` for world items): ordered by number."""

from __future__ import annotations


def id_order(item_id: str) -> tuple[int, str]:
    """A sort key: ``w2`` before ``w10``; an id without a number after every numbered one."""
    digits = item_id[1:]
    return (int(digits), item_id) if digits.isdigit() else (1 << 30, item_id)
