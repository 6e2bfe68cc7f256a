"""What a JSON memory document may hold, and what a write of one must name (seed 000).

A document is one plain JSON object per (conversation, slot), replaced whole on every write,
never merged. An empty slot is exactly ``revision 0, memory null``; a stored one has a
positive revision and an object. A write names the revision it was based on
(``expectedRevision``) and, when that is still the stored one, becomes that revision + 1.

Limits: the object serialized as compact UTF-8 JSON is at most 64 KiB; nesting is at most 32
levels deep (the document itself is level 1, each object or array inside adds one);
revisions are non-negative integers below JavaScript's ``Number.MAX_SAFE_INTEGER``, so a
browser client can hold them exactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from console.textdiff import line_diff
from memory.errors import MemoryInvalid

MAX_DOCUMENT_BYTES = 64 * 1024
MAX_DEPTH = 32
MAX_SAFE_INTEGER = 2**53 - 1  # a revision stays below it
DEFAULT_SLOT = "default"
MAX_SLOT_CHARS = 64
_SLOT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*\Z")


def check_slot(slot: Any) -> str:
    """The slot name: 1-64 letters, digits, ``_ . : -``, starting with a letter or digit."""
    if not isinstance(slot, str) or not 0 < len(slot) <= MAX_SLOT_CHARS or not _SLOT.match(slot):
        raise MemoryInvalid(
            "invalid_slot",
            f"a slot is 1-{MAX_SLOT_CHARS} letters, digits, '_', '.', ':' or '-', "
            "starting with a letter or digit",
            {"slot": slot if isinstance(slot, str) else None},
        )
    return slot


def check_expected_revision(value: Any) -> int:
    """``expectedRevision``: an integer from 0 (the slot is empty) below the safe limit."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryInvalid(
            "invalid_revision",
            "expectedRevision must be an integer (0 when the slot is empty)",
            {"field": "expectedRevision"},
        )
    if not 0 <= value < MAX_SAFE_INTEGER - 1:
        raise MemoryInvalid(
            "invalid_revision",
            f"expectedRevision must be from 0 to {MAX_SAFE_INTEGER - 2}",
            {"field": "expectedRevision", "value": value},
        )
    return value


def check_memory(value: Any) -> None:
    """The whole document: a JSON object, at most 32 levels deep and 64 KiB serialized."""
    if not isinstance(value, dict):
        kind = "null" if value is None else type(value).__name__
        raise MemoryInvalid(
            "memory_not_object",
            f"memory must be a JSON object, not {kind}; it replaces the whole document",
            {"field": "memory"},
        )
    deepest = depth(value)
    if deepest > MAX_DEPTH:
        raise MemoryInvalid(
            "memory_too_deep",
            f"memory is nested {deepest} levels deep; at most {MAX_DEPTH}",
            {"field": "memory", "depth": deepest, "max_depth": MAX_DEPTH},
        )
    size = serialized_size(value)
    if size > MAX_DOCUMENT_BYTES:
        raise MemoryInvalid(
            "memory_too_large",
            f"memory is {size} bytes as JSON; at most {MAX_DOCUMENT_BYTES}",
            {"field": "memory", "bytes": size, "max_bytes": MAX_DOCUMENT_BYTES},
        )


def depth(value: Any) -> int:
    """Levels of objects and arrays (a scalar is 0, ``{}`` is 1), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if not isinstance(item, dict | list):
            continue
        children: Iterable[Any] = item.values() if isinstance(item, dict) else item
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def serialized_size(value: Any) -> int:
    """Bytes of the compact UTF-8 JSON of ``value``; a value JSON cannot hold is refused."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise MemoryInvalid(
            "memory_not_json", f"memory is not plain JSON: {exc}", {"field": "memory"}
        ) from exc
    return len(text.encode("utf-8", "surrogatepass"))


def pretty(memory: Any) -> str:
    """The document as people read it: indented JSON, keys sorted ("" for an empty slot)."""
    if memory is None:
        return ""
    return json.dumps(memory, ensure_ascii=False, indent=2, sort_keys=True)


def diff(old: Any, new: Any) -> list[tuple[str, str]]:
    """The change from ``old`` to ``new`` (documents, or None for an empty slot) as
    ``console.textdiff.line_diff`` rows over their :func:`pretty` text."""
    return line_diff(pretty(old), pretty(new), context=3)
