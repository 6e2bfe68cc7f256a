"""Limits of the character fields a card brings that are lists or JSON, in one place.

Text fields carry their limits on the model (``max_length``); these JSON fields cannot, so
the service checks them for every door (:func:`list_problems`, :func:`extensions_problems`)
and the API serializer and console form are built from the same numbers. Pure Python: the
card mapper, services, serializers and forms all read it.
"""

from __future__ import annotations

import json
from typing import Any

MAX_GREETINGS = 100
MAX_GREETING_CHARS = 20_000
MAX_TAGS = 100
MAX_TAG_CHARS = 100
MAX_EXTENSIONS_BYTES = 256 * 1024  # as compact JSON
MAX_EXTENSIONS_DEPTH = 20

# The key under ``Character.extensions`` where a card's fields that have no column of their
# own are kept (CCv3's nickname, group-only greetings, multilingual notes, source, assets,
# dates, and any unknown field of the card's ``data``), so an export gives them back.
CARD_EXTENSION = "roleplay_card"


def list_problems(
    value: Any, *, max_items: int, max_chars: int, allow_blank: bool = True
) -> list[str]:
    """Why ``value`` is not a list of at most ``max_items`` strings of ``max_chars`` each."""
    if not isinstance(value, list):
        return ["must be a list of strings"]
    problems = []
    if len(value) > max_items:
        problems.append(f"at most {max_items} items (has {len(value)})")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            problems.append(f"item {index} is not a string")
        elif len(item) > max_chars:
            problems.append(f"item {index} has {len(item)} characters (at most {max_chars})")
        elif not allow_blank and not item.strip():
            problems.append(f"item {index} is blank")
        if len(problems) >= 5:
            break
    return problems


def greetings_problems(value: Any) -> list[str]:
    return list_problems(value, max_items=MAX_GREETINGS, max_chars=MAX_GREETING_CHARS)


def tags_problems(value: Any) -> list[str]:
    return list_problems(value, max_items=MAX_TAGS, max_chars=MAX_TAG_CHARS, allow_blank=False)


def json_depth(value: Any) -> int:
    """Nesting depth of a JSON value (a scalar is 0), walked without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth) for child in children)
    return deepest


def extensions_problems(value: Any) -> list[str]:
    """Why ``value`` is not a JSON object within the size and depth limits."""
    if not isinstance(value, dict):
        return ["must be a JSON object"]
    depth = json_depth(value)
    if depth > MAX_EXTENSIONS_DEPTH:
        return [f"nested {depth} levels deep (at most {MAX_EXTENSIONS_DEPTH})"]
    try:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    except (TypeError, ValueError, UnicodeEncodeError):
        return ["must hold only JSON values"]
    if size > MAX_EXTENSIONS_BYTES:
        return [f"{size} bytes as JSON (at most {MAX_EXTENSIONS_BYTES})"]
    return []
