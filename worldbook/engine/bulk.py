"""Bulk edits of entries: what one action does to one entry, on plain native entry dicts.

The editor applies an action to a selection (or to everything a filter matches) in the
user's draft and publishes the result as one revision; this module only knows the actions.
Each returns a new dict (never mutates its input) or the same object when nothing changes,
so the caller can tell which entries the action really touched. Deleting and duplicating
change the book's entry list rather than an entry, so the caller does those with the helpers
at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from worldbook.engine.schema import MAX_ENTRY_ID_CHARS, Key, OrderInt, Position

Action = Literal[
    "enable",
    "disable",
    "set_position",
    "set_depth",
    "set_order",
    "set_group",
    "clear_group",
    "add_key",
    "remove_key",
    "delete",
    "duplicate",
]
# Which parameter each action needs (``set_position`` may also take a depth / outlet name).
NEEDS: dict[str, str] = {
    "set_position": "position",
    "set_depth": "depth",
    "set_order": "order",
    "set_group": "group",
    "add_key": "key",
    "remove_key": "key",
}
LIST_ACTIONS = frozenset({"delete", "duplicate"})


class BulkEdit(BaseModel):
    """One action and its parameter (validated: a missing parameter is a 422)."""

    model_config = ConfigDict(extra="forbid")

    action: Action
    position: Position | None = None
    depth: Annotated[int, Field(ge=0, le=10_000)] | None = None
    order: OrderInt | None = None
    group: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = None
    key: Annotated[Key, StringConstraints(min_length=1)] | None = None
    outlet_name: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None

    @model_validator(mode="after")
    def _parameters(self) -> BulkEdit:
        needed = NEEDS.get(self.action)
        if needed and getattr(self, needed) in (None, ""):
            raise ValueError(f"{self.action} needs {needed}")
        if self.action == "set_position" and self.position == "outlet" and not self.outlet_name:
            raise ValueError("an entry placed at an outlet needs outlet_name")
        return self

    def describe(self) -> str:
        """Words for the flash message and the audit trail: ``set position to at_depth``."""
        needed = NEEDS.get(self.action)
        label = self.action.replace("_", " ")
        return f"{label} {getattr(self, needed)!r}" if needed else label


def _with(entry: dict[str, Any], **changes: Any) -> dict[str, Any]:
    if all(entry.get(name) == value for name, value in changes.items()):
        return entry
    return {**entry, **changes}


def _edit_enable(entry: dict[str, Any], edit: BulkEdit) -> dict[str, Any]:
    return _with(entry, enabled=edit.action == "enable")


def _edit_position(entry: dict[str, Any], edit: BulkEdit) -> dict[str, Any]:
    changes: dict[str, Any] = {"position": edit.position}
    if edit.depth is not None:
        changes["depth"] = edit.depth
    if edit.position == "outlet":
        changes["outlet_name"] = edit.outlet_name
    return _with(entry, **changes)


def _edit_group(entry: dict[str, Any], edit: BulkEdit) -> dict[str, Any]:
    return _with(entry, group=edit.group if edit.action == "set_group" else "")


def _edit_key(entry: dict[str, Any], edit: BulkEdit) -> dict[str, Any]:
    keys = list(entry.get("keys") or ())
    if edit.action == "add_key":
        if edit.key in keys:
            return entry
        return {**entry, "keys": [*keys, edit.key]}
    if edit.key not in keys:
        return entry
    return {**entry, "keys": [k for k in keys if k != edit.key]}


_EDITS: dict[str, Callable[[dict[str, Any], BulkEdit], dict[str, Any]]] = {
    "enable": _edit_enable,
    "disable": _edit_enable,
    "set_position": _edit_position,
    "set_depth": lambda entry, edit: _with(entry, depth=edit.depth),
    "set_order": lambda entry, edit: _with(entry, order=edit.order),
    "set_group": _edit_group,
    "clear_group": _edit_group,
    "add_key": _edit_key,
    "remove_key": _edit_key,
}


def apply(entry: dict[str, Any], edit: BulkEdit) -> dict[str, Any]:
    """``entry`` after a field action (the same object if the action changes nothing)."""
    if edit.action in LIST_ACTIONS:
        raise ValueError(f"{edit.action} changes the entry list; use the list helpers")
    return _EDITS[edit.action](entry, edit)


def copy_id(entry_id: str, taken: set[str]) -> str:
    """A free id for a copy of ``entry_id``: ``x-copy``, ``x-copy-2``... (``taken`` grows)."""
    stem = f"{entry_id}-copy"[:MAX_ENTRY_ID_CHARS]
    candidate, n = stem, 1
    while candidate in taken:
        n += 1
        suffix = f"-{n}"
        candidate = stem[: MAX_ENTRY_ID_CHARS - len(suffix)] + suffix
    taken.add(candidate)
    return candidate


def duplicates(entries: Iterable[dict[str, Any]], taken: set[str]) -> list[dict[str, Any]]:
    """Copies of ``entries`` under fresh ids, titled as copies; ``requires`` is kept."""
    out = []
    for entry in entries:
        title = entry.get("title") or ""
        copy = {**entry, "id": copy_id(str(entry.get("id")), taken)}
        copy["title"] = f"{title} (copy)"[:500] if title else ""
        out.append(copy)
    return out
