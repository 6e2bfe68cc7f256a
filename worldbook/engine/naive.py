"""A deliberately plain keyword activator, the baseline the compiled matcher is measured against.

For every entry and every key it searches the window text directly (``in`` for plain keys,
Python ``re`` for regex keys). It shares the engine's simplified eligibility (enabled,
audience, kind, conditions, runtime requirements, non-empty content) and activation rules
(required, constant, primary keys within the entry's scan window, secondary logic), but has no
probability, timed effects, placement, template variables, hybrid recall, recursion, groups or
budget. On a keyword-only book it must activate exactly what the real engine activates.
"""

from __future__ import annotations

import re

from worldbook.engine.eligibility import condition_passes
from worldbook.engine.entry import Entry
from worldbook.engine.keys import find_plain, parse_regex_key
from worldbook.engine.schema import SELECTABLE_KINDS, EntryIn, SelectRequest
from worldbook.engine.selection import LoadedBook

_PY_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE}


def _key_found(entry: EntryIn | Entry, key: str, messages: list[str]) -> bool:
    if not key:
        return False
    parsed = parse_regex_key(key)
    if parsed is not None:
        flags = 0
        for letter in parsed.flags:
            flags |= _PY_FLAGS.get(letter, 0)
        try:
            pattern = re.compile(parsed.pattern, flags)
        except re.error:
            return False
        return any(pattern.search(text) for text in messages)
    for text in messages:
        haystack, needle = (text, key) if entry.case_sensitive else (text.lower(), key.lower())
        if find_plain(haystack, needle, entry.match_whole_words):
            return True
    return False


def _secondary_ok(entry: EntryIn | Entry, messages: list[str]) -> bool:
    if not entry.selective or not entry.secondary_keys:
        return True
    found = sum(1 for key in entry.secondary_keys if _key_found(entry, key, messages))
    total = len(entry.secondary_keys)
    return {
        "and_any": found >= 1,
        "and_all": found >= total,
        "not_any": found == 0,
        "not_all": found < total,
    }[entry.logic]


def naive_activate(request: SelectRequest, books: list[LoadedBook]) -> set[tuple[str, str]]:
    """``(book_id, entry_id)`` of every entry activated by required, constant or keywords."""
    chat = [m.content for m in request.history] + [request.query]
    activated: set[tuple[str, str]] = set()
    for book in books:
        for index, entry in enumerate(book.entries):
            if not entry.enabled or request.audience not in entry.audience:
                continue
            if entry.kind not in SELECTABLE_KINDS or entry.runtime_requirements:
                continue
            if not all(condition_passes(c, request.state) for c in entry.conditions):
                continue
            if not entry.content.strip():
                continue
            entry_id = entry.id or f"entry-{index}"
            if entry.required or entry.constant:
                activated.add((book.book_id, entry_id))
                continue
            depth = request.scan_depth if entry.scan_depth is None else entry.scan_depth
            window = chat[max(0, len(chat) - depth) :] if depth else []
            if any(_key_found(entry, key, window) for key in entry.keys) and _secondary_ok(
                entry, window
            ):
                activated.add((book.book_id, entry_id))
    return activated
