"""What changed between two revisions of a book, for the console's history page.

Pure Python (no Django), so it is tested on plain dicts. Entries are matched by id, the one
identity an entry keeps across revisions. Short values are shown as ``old → new``; long or
multi-line text gets a difflib diff, because a 2,000-character lore entry that gained one
sentence is unreadable as two full copies: multi-line text is diffed by line (unified, with
context), a long single line inline by token, where a token is a Latin word, a run of spaces
or a single other character, so Chinese and Japanese text diffs character by character.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from console.textdiff import line_diff

BOOK_FIELDS = ("name", "description", "metadata")
LONG_TEXT = 80
_TOKEN = re.compile(r"[A-Za-z0-9_]+|\s+|.", re.DOTALL)


@dataclass
class FieldChange:
    """One changed field. ``lines`` is a line diff, ``inline`` an inline one (or neither)."""

    field: str
    old: Any
    new: Any
    lines: list[tuple[str, str]] | None = None
    inline: list[tuple[str, str]] | None = None

    @property
    def old_text(self) -> str:
        return _show(self.old)

    @property
    def new_text(self) -> str:
        return _show(self.new)


@dataclass
class EntryChange:
    id: str
    title: str
    fields: list[FieldChange]


@dataclass
class BookDiff:
    book_fields: list[FieldChange] = field(default_factory=list)
    added: list[dict] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)
    changed: list[EntryChange] = field(default_factory=list)
    unchanged: int = 0
    reordered: bool = False

    @property
    def empty(self) -> bool:
        return not (
            self.book_fields or self.added or self.removed or self.changed or self.reordered
        )


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def inline_diff(old: str, new: str) -> list[tuple[str, str]]:
    """Token-level segments ``(kind, text)`` with kind ``equal``, ``del`` or ``add``."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("add", "".join(b[j1:j2])))
    return out


def field_change(name: str, old: Any, new: Any) -> FieldChange:
    change = FieldChange(name, old, new)
    if isinstance(old, str) and isinstance(new, str):
        if "\n" in old or "\n" in new:
            change.lines = line_diff(old, new)
        elif max(len(old), len(new)) > LONG_TEXT:
            change.inline = inline_diff(old, new)
    return change


def _entry_changes(old: dict, new: dict) -> list[FieldChange]:
    names = list(dict.fromkeys([*old, *new]))
    return [
        field_change(name, old.get(name), new.get(name))
        for name in names
        if old.get(name) != new.get(name)
    ]


def _summary(entry: dict) -> dict:
    return {"id": entry.get("id"), "title": entry.get("title") or ""}


def _entries_by_id(content: dict) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for index, entry in enumerate(content.get("entries") or []):
        out[str(entry.get("id") or f"entry-{index}")] = entry
    return out


def diff_books(old: dict, new: dict) -> BookDiff:
    """The changes from book content ``old`` to ``new`` (native book dicts)."""
    result = BookDiff()
    for name in BOOK_FIELDS:
        if old.get(name) != new.get(name):
            result.book_fields.append(field_change(name, old.get(name), new.get(name)))
    before, after = _entries_by_id(old), _entries_by_id(new)
    result.added = [_summary(e) for eid, e in after.items() if eid not in before]
    result.removed = [_summary(e) for eid, e in before.items() if eid not in after]
    for eid, entry in after.items():
        if eid not in before:
            continue
        changes = _entry_changes(before[eid], entry)
        if changes:
            title = entry.get("title") or before[eid].get("title") or ""
            result.changed.append(EntryChange(eid, title, changes))
        else:
            result.unchanged += 1
    common_before = [eid for eid in before if eid in after]
    common_after = [eid for eid in after if eid in before]
    result.reordered = common_before != common_after
    return result
