"""The entry as selection holds it: a compact record of an :class:`EntryIn`'s fields.

A parsed revision stays in memory for as long as any turn may read it, and a prompt may bind
20 books of 5,000 entries. As pydantic models, each entry costs about 3.7 KB and several
objects the garbage collector walks on every full collection. This record keeps, per entry,
only what differs from entry to entry (id, title, content, keys, priority, order, metadata,
source); the thirty-odd settings that most entries of a book share (enabled, logic, kind,
position, audience, conditions, timed effects, groups…) live in one *traits* tuple that
entries with equal settings share. A key list of two or more keys is held as one string
joined by a separator no key contains. Reading a field looks the same as on the model
(``tests/worldbook/engine/test_wb_prepared.py`` pins every field); the lists come back as
tuples, and the two derived properties are computed once.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Any

from worldbook.engine.schema import (
    Condition,
    EntryIn,
    canonical_json,
    group_names,
    recursion_level,
)

_EMPTY: dict[str, Any] = {}
SEP = "\x1f"  # joins a key list; a list with a key containing it stays a tuple

# Fields held per entry; the rest are traits, shared by entries with equal settings.
OWN_FIELDS = ("id", "title", "content", "keys", "secondary_keys", "priority", "order")
OWN_DICTS = ("metadata", "source")
TRAIT_FIELDS: tuple[str, ...] = tuple(
    name for name in EntryIn.model_fields if name not in OWN_FIELDS + OWN_DICTS
) + ("group_names", "recursion_level")
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
_CONDITIONS = TRAIT_FIELDS.index("conditions")
_DELAY_UNTIL_RECURSION = TRAIT_FIELDS.index("delay_until_recursion")
_CASE_SENSITIVE = TRAIT_FIELDS.index("case_sensitive")
_WHOLE_WORDS = TRAIT_FIELDS.index("match_whole_words")


def _pack(keys: Sequence[str]) -> str | tuple[str, ...]:
    if not keys:
        return ()
    joined = SEP.join(keys)
    return joined if joined.count(SEP) == len(keys) - 1 else tuple(keys)


def unpack(packed: str | tuple[str, ...]) -> tuple[str, ...]:
    return tuple(packed.split(SEP)) if isinstance(packed, str) else packed


class Entry:
    """One entry of a loaded revision. Treat it as immutable: revisions are."""

    __slots__ = (
        "id",
        "title",
        "content",
        "_keys",
        "_secondary",
        "priority",
        "order",
        "metadata",
        "source",
        "_traits",
    )

    id: str | None
    title: str
    content: str
    priority: int
    order: int
    metadata: dict[str, Any]
    source: dict[str, Any] | None
    # Traits: read-only properties over ``_traits`` (set up below the class).
    enabled: bool
    constant: bool
    required: bool
    selective: bool
    logic: str
    case_sensitive: bool
    match_whole_words: bool
    probability: int
    scan_depth: int | None
    conditions: tuple[Condition, ...]
    requires: tuple[str, ...]
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

    def __init__(
        self,
        id: str | None,
        title: str,
        content: str,
        keys: str | tuple[str, ...],
        secondary: str | tuple[str, ...],
        priority: int,
        order: int,
        metadata: dict[str, Any],
        source: dict[str, Any] | None,
        traits: tuple[Any, ...],
    ) -> None:
        self.id = id
        self.title = title
        self.content = content
        self._keys = keys
        self._secondary = secondary
        self.priority = priority
        self.order = order
        self.metadata = metadata
        self.source = source
        self._traits = traits

    @property
    def keys(self) -> tuple[str, ...]:
        return unpack(self._keys)

    @property
    def secondary_keys(self) -> tuple[str, ...]:
        return unpack(self._secondary)

    def key_lists(self) -> tuple[bool, bool, str | tuple[str, ...], str | tuple[str, ...]]:
        """(case sensitive, whole words, keys, secondary keys) with each key list as held:
        a string joins the keys with ``SEP`` (split it, or :func:`unpack` it), a tuple when
        a key holds the separator. One call serves the compiler's pass over 5,000 entries."""
        traits = self._traits
        return traits[_CASE_SENSITIVE], traits[_WHOLE_WORDS], self._keys, self._secondary

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt by one call with the values in order; pickling keeps one copy of a traits
        # tuple however many entries share it.
        return (Entry, tuple(getattr(self, name) for name in self.__slots__))

    @classmethod
    def of(cls, entry: EntryIn | Entry, shared: dict | None = None) -> Entry:
        """The record of ``entry``; ``shared`` (a dict the caller keeps for one revision,
        as :func:`compact` does) lets the records of that revision share equal traits."""
        if isinstance(entry, Entry):
            return entry
        fields = entry.__dict__  # a model's field values: read in one C call, not by name
        if shared is None or fields["conditions"]:
            values = _traits(list(_read_traits(entry)), shared)
        else:
            # The common case, looked up by the raw settings before anything is derived:
            # most entries of a book share their settings, so the traits are built once.
            key = (
                _read_plain(fields),
                tuple(fields["requires"]),
                tuple(fields["audience"]),
                tuple(fields["runtime_requirements"]),
                fields["delay_until_recursion"].__class__,  # True and 1 compare equal
            )
            found = shared.get(key)
            if found is None:
                found = shared[key] = _traits(list(_read_traits(entry)), None)
            values = found
        return cls._made(fields, values)

    @classmethod
    def of_stored(cls, fields: dict[str, Any], shared: dict) -> Entry:
        """The record of a stored entry: the JSON of a validated :class:`EntryIn`
        (``model_dump(mode="json")``), every field present and valid, read without
        validating it again (see :func:`compact_stored`). Equal to ``Entry.of`` of the
        model it was dumped from (``tests/worldbook/engine/test_wb_prepare_fastpaths.py``)."""
        if fields["conditions"]:
            return cls._made(fields, _traits(_stored_traits(fields), shared))
        key = (
            _read_plain(fields),
            tuple(fields["requires"]),
            tuple(fields["audience"]),
            tuple(fields["runtime_requirements"]),
            fields["delay_until_recursion"].__class__,
        )
        found = shared.get(key)
        if found is None:
            found = shared[key] = _traits(_stored_traits(fields), None)
        return cls._made(fields, found)

    @classmethod
    def _made(cls, fields: dict[str, Any], values: tuple[Any, ...]) -> Entry:
        id_, title, content, keys, secondary, priority, order, metadata, source = _read_own(fields)
        return cls(
            id_,
            title,
            content,
            _pack(keys),
            _pack(secondary),
            priority,
            order,
            metadata or _EMPTY,  # most entries: share one, never written to
            source,
            values,
        )


def _traits(traits: list[Any], shared: dict | None) -> tuple[Any, ...]:
    """The traits tuple of an entry's trait values; with ``shared``, the equal tuple already
    in it."""
    for i in _TUPLE_AT:
        traits[i] = tuple(traits[i])
    for i in _STRING_AT:  # one string object per value, not one per entry
        if traits[i] is not None:
            traits[i] = sys.intern(traits[i])
    values = tuple(traits)
    if shared is not None:
        values = shared.setdefault(_traits_key(values), values)
    return values


_read_traits = attrgetter(*TRAIT_FIELDS)
# The traits that are neither lists nor derived: hashable as they are.
_DERIVED = ("group_names", "recursion_level")
_read_stored = itemgetter(*(n for n in TRAIT_FIELDS if n not in _DERIVED))
_STORED_FIELDS = frozenset(EntryIn.model_fields)


def _stored_traits(fields: dict[str, Any]) -> list[Any]:
    """An entry's trait values from its stored fields, as ``_read_traits`` reads a model's:
    the conditions as models, the two derived traits computed by the model's own rules."""
    traits = list(_read_stored(fields))
    if fields["conditions"]:
        traits[_CONDITIONS] = [Condition.model_validate(c) for c in fields["conditions"]]
    traits += (group_names(fields["group"]), recursion_level(fields["delay_until_recursion"]))
    return traits


_read_plain = itemgetter(*(n for n in TRAIT_FIELDS if n not in TUPLE_FIELDS + _DERIVED))
_read_own = itemgetter(*OWN_FIELDS, *OWN_DICTS)
_TUPLE_AT = tuple(i for i, name in enumerate(TRAIT_FIELDS) if name in TUPLE_FIELDS)
_STRING_AT = tuple(i for i, name in enumerate(TRAIT_FIELDS) if name in SHARED_STRINGS)


def _traits_key(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """A hashable key equal for equal traits: conditions by their JSON, and ``True`` told
    apart from ``1`` (``delay_until_recursion`` may be either, and they compare equal)."""
    kind = values[_DELAY_UNTIL_RECURSION].__class__
    if not values[_CONDITIONS]:
        return (*values, kind)
    conditions = tuple(_condition_key(c) for c in values[_CONDITIONS])
    return (*values[:_CONDITIONS], conditions, *values[_CONDITIONS + 1 :], kind)


def _condition_key(condition: Condition) -> tuple[str, str, str]:
    return condition.path, condition.op, canonical_json(condition.value)


def _trait(index: int) -> property:
    get = itemgetter(index)
    return property(lambda self: get(self._traits))


for _index, _name in enumerate(TRAIT_FIELDS):
    setattr(Entry, _name, _trait(_index))
del _index, _name

assert set(OWN_FIELDS + OWN_DICTS + TRAIT_FIELDS) == set(MODEL_FIELDS), "Entry mirrors EntryIn"


def compact(entries) -> list[Entry]:
    """``entries`` (models or records) as records, equal traits shared."""
    shared: dict = {}
    return [Entry.of(entry, shared) for entry in entries]


def compact_stored(entries: list[dict[str, Any]]) -> list[Entry] | None:
    """A stored revision's entries as records, equal traits shared, without validating what
    was validated when it was published (a third of a 5,000-entry revision's preparation);
    None when an entry does not hold exactly the model's fields with an id (content
    stored by another version): the caller validates it instead."""
    shared: dict = {}
    out = []
    for fields in entries:
        if fields.keys() != _STORED_FIELDS or fields["id"] is None:
            return None
        out.append(Entry.of_stored(fields, shared))
    return out
