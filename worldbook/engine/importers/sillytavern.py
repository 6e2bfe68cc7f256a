"""SillyTavern world-info JSON -> native book.

A world-info file is ``{"entries": {"<uid>": {...}}}`` (older tools write a list). Every ST
entry field is either mapped to a native field or kept in the entry's ``source`` and, when it
carries a non-default value, listed in the report's lossy mappings.

Decisions worth knowing:

* ``order`` stays ``order`` and ``priority`` stays 0. ST uses ``order`` both for insertion
  position and for which entries survive the budget; our selector already ranks by ``order``
  after ``priority``, so copying it into ``priority`` too would count it twice (and clash
  with a card's own ``priority``).
* ``excludeRecursion``/``preventRecursion`` keep the file's values (ST's default is ``false``,
  the native default is ``true``), so imported books recurse the way they did in ST.
* ``useProbability: false`` means ST ignores ``probability``: we store 100.
* ``caseSensitive``/``matchWholeWords`` ``null`` mean "use the global setting", whose ST
  default is off: we store ``false``.
* A missing ``depth`` is ST's default of 4, not the native 0.
"""

from __future__ import annotations

from typing import Any

from worldbook.engine.importers.normalize import (
    DURATION_LIMIT,
    MAX_GROUP_CHARS,
    MAX_OUTLET_CHARS,
    MAX_TITLE_CHARS,
    FieldReader,
    IdAllocator,
    apply_decorators,
    finish_entry,
    native_extras,
    report_unmapped,
)
from worldbook.engine.importers.report import ImportReport

# The extension key our exporter writes native-only fields under (entry and book level).
NATIVE_EXTENSION = "roleplay_native"

ST_DEFAULT_ORDER = 100
ST_DEFAULT_DEPTH = 4
ST_DEFAULT_GROUP_WEIGHT = 100

POSITIONS = (
    "before_character",  # 0 world_info_position.before
    "after_character",  # 1 after
    "author_note_top",  # 2 ANTop
    "author_note_bottom",  # 3 ANBottom
    "at_depth",  # 4 atDepth
    "before_examples",  # 5 EMTop
    "after_examples",  # 6 EMBottom
    "outlet",  # 7 outlet
)
# A card book's position names, which older tools also write into world-info files.
CARD_POSITIONS = {"before_char": "before_character", "after_char": "after_character"}
LOGICS = ("and_any", "not_all", "not_any", "and_all")  # world_info_logic 0..3
ROLES = ("system", "user", "assistant")  # extension_prompt_roles 0..2

# ST fields we keep only in ``source``, with the value that means "no effect".
UNMAPPED_DEFAULTS: dict[str, Any] = {
    "automationId": "",
    "ignoreBudget": False,
    "matchPersonaDescription": False,
    "matchCharacterDescription": False,
    "matchCharacterPersonality": False,
    "matchCharacterDepthPrompt": False,
    "matchScenario": False,
    "matchCreatorNotes": False,
    "characterFilter": {"isExclude": False, "names": [], "tags": []},
    "characterFilterNames": [],
    "characterFilterTags": [],
    "characterFilterExclude": False,
    "triggers": [],
    "extensions": {},
}
# Only steer ST's editor (memo toggle, list order): never reported.
COSMETIC = frozenset({"addMemo", "displayIndex"})

MAPPED = frozenset(
    {
        "uid",
        "key",
        "keysecondary",
        "comment",
        "content",
        "constant",
        "vectorized",
        "selective",
        "selectiveLogic",
        "order",
        "position",
        "disable",
        "excludeRecursion",
        "preventRecursion",
        "delayUntilRecursion",
        "probability",
        "useProbability",
        "depth",
        "outletName",
        "group",
        "groupOverride",
        "groupWeight",
        "scanDepth",
        "caseSensitive",
        "matchWholeWords",
        "useGroupScoring",
        "role",
        "sticky",
        "cooldown",
        "delay",
    }
)


def enum_value(
    reader: FieldReader, field: str, value: Any, names: tuple[str, ...], default: str
) -> str:
    """Map an ST enum given as its number (or already as our name) to our name."""
    if value is None:
        return default
    if isinstance(value, str) and value in names:
        return value
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        try:
            number = int(float(value))
        except ValueError:
            number = -1
        if 0 <= number < len(names) and number == float(value):
            return names[number]
    reader.lossy(field, value, f"unknown value; used {default}")
    return default


def delay_until_recursion(reader: FieldReader, field: str, value: Any) -> bool | int:
    """``false``/0 = off, ``true`` = level 1, a number = that recursion level (kept as is)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    level = reader.optional_integer(field, value, 0, 100)
    if not level:
        return False
    return level


def map_fields(raw: dict[str, Any], reader: FieldReader) -> dict[str, Any]:
    """The native fields of one ST entry (everything but ``id``, ``source`` and extras)."""
    use_probability = reader.boolean("useProbability", raw.get("useProbability"), True)
    probability = reader.integer("probability", raw.get("probability"), 100, 0, 100)
    outlet = reader.text("outletName", raw.get("outletName"), MAX_OUTLET_CHARS).strip()
    role = raw.get("role")
    position = raw.get("position")
    if isinstance(position, str):
        position = CARD_POSITIONS.get(position.strip(), position)
    return {
        "title": reader.text("comment", raw.get("comment"), MAX_TITLE_CHARS),
        "content": reader.text("content", raw.get("content")),
        "enabled": not reader.boolean("disable", raw.get("disable"), False),
        "constant": reader.boolean("constant", raw.get("constant"), False),
        "keys": reader.keys("key", raw.get("key")),
        "secondary_keys": reader.keys("keysecondary", raw.get("keysecondary")),
        "selective": reader.boolean("selective", raw.get("selective"), True),
        "logic": enum_value(reader, "selectiveLogic", raw.get("selectiveLogic"), LOGICS, LOGICS[0]),
        "case_sensitive": reader.boolean("caseSensitive", raw.get("caseSensitive"), False),
        "match_whole_words": reader.boolean("matchWholeWords", raw.get("matchWholeWords"), False),
        "probability": probability if use_probability else 100,
        "scan_depth": reader.optional_integer("scanDepth", raw.get("scanDepth"), 0, 100),
        "order": reader.order("order", raw.get("order"), ST_DEFAULT_ORDER),
        "position": enum_value(reader, "position", position, POSITIONS, POSITIONS[0]),
        "depth": reader.integer("depth", raw.get("depth"), ST_DEFAULT_DEPTH, 0, 10_000),
        "role": enum_value(reader, "role", role, ROLES, ROLES[0]),
        "outlet_name": outlet or None,
        "exclude_recursion": reader.boolean("excludeRecursion", raw.get("excludeRecursion"), False),
        "prevent_recursion": reader.boolean("preventRecursion", raw.get("preventRecursion"), False),
        "sticky": reader.optional_integer("sticky", raw.get("sticky"), 0, DURATION_LIMIT),
        "cooldown": reader.optional_integer("cooldown", raw.get("cooldown"), 0, DURATION_LIMIT),
        "delay": reader.optional_integer("delay", raw.get("delay"), 0, DURATION_LIMIT),
        "delay_until_recursion": delay_until_recursion(
            reader, "delayUntilRecursion", raw.get("delayUntilRecursion")
        ),
        "group": reader.text("group", raw.get("group"), MAX_GROUP_CHARS),
        "group_override": reader.boolean("groupOverride", raw.get("groupOverride"), False),
        "group_weight": reader.integer(
            "groupWeight", raw.get("groupWeight"), ST_DEFAULT_GROUP_WEIGHT, 1, 1_000_000
        ),
        "use_group_scoring": reader.optional_boolean("useGroupScoring", raw.get("useGroupScoring")),
        "vectorized": reader.boolean("vectorized", raw.get("vectorized"), False),
    }


def map_entry(
    raw: dict[str, Any], fallback_id: str, ids: IdAllocator, report: ImportReport
) -> dict[str, Any]:
    """One ST entry -> one native entry dict (validates as ``EntryIn``)."""
    extensions = raw.get("extensions")
    extras: Any = None
    if isinstance(extensions, dict) and NATIVE_EXTENSION in extensions:
        extras = extensions[NATIVE_EXTENSION]
    uid = raw.get("uid")
    candidate = fallback_id if uid is None or isinstance(uid, dict | list) else str(uid)
    if isinstance(extras, dict) and isinstance(extras.get("id"), str) and extras["id"].strip():
        candidate = extras["id"]
    entry_id = ids.allocate(candidate, fallback_id)
    if entry_id != candidate.strip():
        report.warn("entry_id_changed", f"entry id {candidate!r} was taken; using {entry_id!r}")
    reader = FieldReader(report, entry_id)
    entry: dict[str, Any] = {"id": entry_id, **map_fields(raw, reader)}
    entry.update(native_extras(reader, extras))
    apply_decorators(entry, reader)
    unmapped = {name: value for name, value in raw.items() if name not in MAPPED}
    if isinstance(extensions, dict):
        others = {k: v for k, v in extensions.items() if k != NATIVE_EXTENSION}
        unmapped["extensions"] = others
    entry["source"] = {
        "format": "sillytavern",
        "uid": uid if isinstance(uid, int | str) else None,
        "fields": report_unmapped(reader, unmapped, UNMAPPED_DEFAULTS, COSMETIC),
    }
    return finish_entry(entry, reader, entry["title"])


def raw_entries(entries: Any) -> list[tuple[str, Any]]:
    """``(fallback id, raw entry)`` pairs in file order from the dict or list form."""
    if isinstance(entries, dict):
        return [(str(key), value) for key, value in entries.items()]
    if isinstance(entries, list):
        return [(str(index), value) for index, value in enumerate(entries)]
    return []


def parse_sillytavern(data: dict[str, Any], report: ImportReport) -> dict[str, Any]:
    """Map a whole world-info object; the caller adds name fallbacks and import metadata."""
    pairs = raw_entries(data.get("entries"))
    report.entry_count = len(pairs)
    ids = IdAllocator()
    entries = []
    for fallback_id, raw in pairs:
        if not isinstance(raw, dict):
            report.warn("entry_skipped", f"entry {fallback_id!r} is not an object; skipped")
            continue
        entries.append(map_entry(raw, fallback_id, ids, report))
    report.imported_count = len(entries)
    book: dict[str, Any] = {"entries": entries}
    extensions = data.get("extensions")
    native = extensions.get(NATIVE_EXTENSION) if isinstance(extensions, dict) else None
    if isinstance(native, dict):
        for name in ("name", "description"):
            if isinstance(native.get(name), str):
                book[name] = native[name]
        if isinstance(native.get("metadata"), dict):
            book["metadata"] = dict(native["metadata"])
    for name in ("name", "description"):
        if name not in book and isinstance(data.get(name), str):
            book[name] = data[name]
    if "originalData" in data:
        report.warn(
            "original_data_ignored",
            "originalData (ST's copy of the card's book) is ignored; entries are used",
        )
    return book
