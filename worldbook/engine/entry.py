"""The entry as selection holds it: a slotted record of an :class:`EntryIn`'s fields.

A parsed revision stays in memory for as long as any turn may read it, and a prompt may bind
20 books of 5,000 entries. As pydantic models, each entry costs about 3.7 KB and several
objects the garbage collector walks on every full collection (the model's ``__dict__``, its
fields-set, a list per list field); this record costs about a quarter of that and one tracked
object, with the lists as tuples. The fields, their names and values are the model's
(``tests/worldbook/engine/test_wb_entry.py`` pins them); the two derived properties are
computed once.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields
from typing import Any

from worldbook.engine.schema import Condition, EntryIn

_EMPTY: dict[str, Any] = {}


@dataclass(slots=True, eq=False)
class Entry:
    """One entry of a loaded revision. Treat it as immutable: revisions are."""

    id: str | None
    title: str
    content: str
    enabled: bool
    constant: bool
    required: bool
    keys: tuple[str, ...]
    secondary_keys: tuple[str, ...]
    selective: bool
    logic: str
    case_sensitive: bool
    match_whole_words: bool
    probability: int
    scan_depth: int | None
    conditions: tuple[Condition, ...]
    requires: tuple[str, ...]
    priority: int
    order: int
    conflict_key: str | None
    audience: tuple[str, ...]
    kind: str
    position: str
    depth: int
    role: str
    outlet_name: str | None
    exclude_recursion: bool
    prevent_recursion: bool
    runtime_requirements: tuple[str, ...]
    metadata: dict[str, Any]
    source: dict[str, Any] | None
    sticky: int | None
    cooldown: int | None
    delay: int | None
    delay_until_recursion: bool | int
    group: str
    group_override: bool
    group_weight: int
    use_group_scoring: bool | None
    vectorized: bool
    group_names: tuple[str, ...]
    recursion_level: int

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt by one call with the values in order: much faster to unpickle than the
        # default of setting each slot from a dictionary.
        return (Entry, tuple(getattr(self, name) for name in MODEL_FIELDS))

    @classmethod
    def of(cls, entry: EntryIn | Entry) -> Entry:
        if isinstance(entry, Entry):
            return entry
        values = {name: getattr(entry, name) for name in MODEL_FIELDS}
        for name in TUPLE_FIELDS:
            values[name] = tuple(values[name])
        if not values["metadata"]:
            values["metadata"] = _EMPTY  # most entries: share one, never written to
        for name in SHARED_STRINGS:  # one string object per value, not one per entry
            if values[name] is not None:
                values[name] = sys.intern(values[name])
        return cls(**values)


# The model's fields plus its two derived properties, in the model's order.
MODEL_FIELDS: tuple[str, ...] = tuple(EntryIn.model_fields) + ("group_names", "recursion_level")
SHARED_STRINGS = ("logic", "kind", "position", "role", "group", "outlet_name")
TUPLE_FIELDS = (
    "keys",
    "secondary_keys",
    "conditions",
    "requires",
    "audience",
    "runtime_requirements",
)
assert tuple(f.name for f in fields(Entry)) == MODEL_FIELDS, "Entry must mirror EntryIn"


def compact(entries) -> list[Entry]:
    """``entries`` (models or records) as records."""
    return [Entry.of(entry) for entry in entries]
