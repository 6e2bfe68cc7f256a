"""Character cards (CCv2, CCv3) -> the native book of their ``character_book``.

Only the embedded worldbook is imported; the card's character fields (description, greeting,
...) are not turned into a character of this product. A card entry stores SillyTavern's extra
fields under ``extensions`` with snake_case names; we rename them to ST's world-info names
and reuse the ST field mapping, so both formats follow exactly the same rules. Lossy-mapping
reports still name the card's own fields (``insertion_order``, ``extensions.depth``...).
"""

from __future__ import annotations

from typing import Any

from worldbook.engine.importers.errors import INVALID_CARD, NO_WORLDBOOK, ImportFailure
from worldbook.engine.importers.normalize import (
    FieldReader,
    IdAllocator,
    apply_decorators,
    finish_entry,
    native_extras,
    report_unmapped,
)
from worldbook.engine.importers.report import ImportReport
from worldbook.engine.importers.sillytavern import NATIVE_EXTENSION, map_fields

CARD_SPECS = {"chara_card_v2": "ccv2", "chara_card_v3": "ccv3"}

# extensions.<card name> -> ST world-info name read by ``map_fields``.
EXTENSION_FIELDS = {
    "position": "position",
    "exclude_recursion": "excludeRecursion",
    "prevent_recursion": "preventRecursion",
    "delay_until_recursion": "delayUntilRecursion",
    "probability": "probability",
    "useProbability": "useProbability",
    "depth": "depth",
    "selectiveLogic": "selectiveLogic",
    "outlet_name": "outletName",
    "group": "group",
    "group_override": "groupOverride",
    "group_weight": "groupWeight",
    "scan_depth": "scanDepth",
    "case_sensitive": "caseSensitive",
    "match_whole_words": "matchWholeWords",
    "use_group_scoring": "useGroupScoring",
    "role": "role",
    "vectorized": "vectorized",
    "sticky": "sticky",
    "cooldown": "cooldown",
    "delay": "delay",
}
ENTRY_FIELDS = {
    "keys": "key",
    "secondary_keys": "keysecondary",
    "content": "content",
    "constant": "constant",
    "selective": "selective",
    "insertion_order": "order",
}
HANDLED_ENTRY_FIELDS = frozenset(
    set(ENTRY_FIELDS)
    | {"extensions", "enabled", "name", "comment", "id", "priority", "position", "use_regex"}
    | {"case_sensitive"}
)
# Extension fields kept only in ``source``, with the value that means "no effect".
UNMAPPED_EXTENSION_DEFAULTS: dict[str, Any] = {
    "extensions.automation_id": "",
    "extensions.ignore_budget": False,
    "extensions.match_persona_description": False,
    "extensions.match_character_description": False,
    "extensions.match_character_personality": False,
    "extensions.match_character_depth_prompt": False,
    "extensions.match_scenario": False,
    "extensions.match_creator_notes": False,
    "extensions.triggers": [],
    "extensions.character_filter": None,
}
COSMETIC = frozenset({"extensions.display_index", "extensions.addMemo"})
ALIASES = {st: f"extensions.{card}" for card, st in EXTENSION_FIELDS.items()} | {
    st: card for card, st in ENTRY_FIELDS.items()
}


def card_spec(data: dict[str, Any]) -> str | None:
    """``ccv2``/``ccv3`` for a card object, else ``None``.

    A card without ``spec`` but with ``data.character_book`` is read as CCv2, as ST does.
    """
    spec = data.get("spec")
    if isinstance(spec, str) and spec in CARD_SPECS:
        return CARD_SPECS[spec]
    inner = data.get("data")
    if spec is None and isinstance(inner, dict) and "character_book" in inner:
        return "ccv2"
    return None


def looks_like_v1_card(data: dict[str, Any]) -> bool:
    """A CCv1 card (top-level ``name`` and ``first_mes``), which cannot hold a worldbook."""
    return isinstance(data.get("name"), str) and "first_mes" in data and "spec" not in data


def regex_keys(reader: FieldReader, field: str, keys: list[str], case_sensitive: bool) -> list[str]:
    """CCv3 ``use_regex``: keys are bare patterns; we spell regex keys ``/pattern/flags``."""
    rewritten = []
    for key in keys:
        if key.startswith("/") and key.rstrip("gimsuy").endswith("/") and len(key) > 2:
            rewritten.append(key)
            continue
        body = key.replace("/", "\\/")
        rewritten.append(f"/{body}/" if case_sensitive else f"/{body}/i")
    if rewritten != keys:
        reader.lossy(field, keys, "use_regex: keys rewritten as /pattern/flags")
    return rewritten


def map_card_entry(
    raw: dict[str, Any], index: int, fmt: str, ids: IdAllocator, report: ImportReport
) -> dict[str, Any]:
    """One ``character_book`` entry -> one native entry dict."""
    extensions = raw.get("extensions")
    ext: dict[str, Any] = extensions if isinstance(extensions, dict) else {}
    raw_id = raw.get("id")
    candidate = str(raw_id) if isinstance(raw_id, int | str) else str(index)
    extras = ext.get(NATIVE_EXTENSION)
    if isinstance(extras, dict) and isinstance(extras.get("id"), str) and extras["id"].strip():
        candidate = extras["id"]
    entry_id = ids.allocate(candidate, str(index))
    if entry_id != candidate.strip():
        report.warn("entry_id_changed", f"entry id {candidate!r} was taken; using {entry_id!r}")
    reader = FieldReader(report, entry_id, ALIASES)

    st: dict[str, Any] = {st_name: raw.get(card) for card, st_name in ENTRY_FIELDS.items()}
    # The card spec's default is false (ST's own world-info default is true).
    st["selective"] = False if raw.get("selective") is None else raw["selective"]
    comment, name = raw.get("comment"), raw.get("name")
    st["comment"] = comment if isinstance(comment, str) and comment.strip() else name
    st["disable"] = not reader.boolean("enabled", raw.get("enabled"), True)
    for card_name, st_name in EXTENSION_FIELDS.items():
        if card_name in ext:
            st[st_name] = ext[card_name]
    if "position" not in ext:
        # ST: only "before_char" is before; anything else (or nothing) is after.
        st["position"] = 0 if raw.get("position") == "before_char" else 1
        if raw.get("position") not in (None, "before_char", "after_char"):
            reader.lossy("position", raw.get("position"), "unknown position; used after_char")
    if "case_sensitive" not in ext:
        st["caseSensitive"] = raw.get("case_sensitive")

    entry: dict[str, Any] = {"id": entry_id, **map_fields(st, reader)}
    entry["priority"] = reader.order("priority", raw.get("priority"), 0)
    if reader.boolean("use_regex", raw.get("use_regex"), False):
        for field, card_field in (("keys", "keys"), ("secondary_keys", "secondary_keys")):
            entry[field] = reader.keys(
                card_field,
                regex_keys(reader, card_field, entry[field], entry["case_sensitive"]),
            )
    entry.update(native_extras(reader, extras))
    apply_decorators(entry, reader)

    unmapped: dict[str, Any] = {k: v for k, v in raw.items() if k not in HANDLED_ENTRY_FIELDS}
    for name, value in ext.items():
        if name not in EXTENSION_FIELDS and name != NATIVE_EXTENSION:
            unmapped[f"extensions.{name}"] = value
    entry["source"] = {
        "format": fmt,
        "id": raw_id if isinstance(raw_id, int | str) else None,
        "fields": report_unmapped(reader, unmapped, UNMAPPED_EXTENSION_DEFAULTS, COSMETIC),
    }
    return finish_entry(entry, reader, entry["title"])


def parse_card(card: dict[str, Any], fmt: str, report: ImportReport) -> dict[str, Any]:
    """Map a card's ``character_book``; raises ``no_worldbook`` when it has none."""
    data = card.get("data")
    if not isinstance(data, dict):
        raise ImportFailure(INVALID_CARD, "the card has no 'data' object", {"format": fmt})
    card_name = data.get("name") if isinstance(data.get("name"), str) else None
    book_data = data.get("character_book")
    if book_data is None:
        raise ImportFailure(
            NO_WORLDBOOK, "the card has no character_book (no worldbook to import)", {}
        )
    if not isinstance(book_data, dict):
        raise ImportFailure(INVALID_CARD, "character_book is not an object", {})
    raw_entries = book_data.get("entries")
    if isinstance(raw_entries, dict):
        raw_entries = list(raw_entries.values())
    if raw_entries is None:
        raw_entries = []
    if not isinstance(raw_entries, list):
        raise ImportFailure(INVALID_CARD, "character_book.entries is not a list", {})
    report.entry_count = len(raw_entries)
    ids = IdAllocator()
    entries = []
    for index, raw in enumerate(raw_entries):
        if not isinstance(raw, dict):
            report.warn("entry_skipped", f"entry {index} is not an object; skipped")
            continue
        entries.append(map_card_entry(raw, index, fmt, ids, report))
    report.imported_count = len(entries)
    book: dict[str, Any] = {"entries": entries}
    name = book_data.get("name")
    if isinstance(name, str) and name.strip():
        book["name"] = name
    elif card_name and card_name.strip():
        book["name"] = f"{card_name.strip()} worldbook"
    if isinstance(book_data.get("description"), str):
        book["description"] = book_data["description"]
    settings = {
        key: book_data[key]
        for key in ("scan_depth", "token_budget", "recursive_scanning", "extensions")
        if book_data.get(key) not in (None, {}, [])
    }
    metadata: dict[str, Any] = {}
    book_ext = book_data.get("extensions")
    if isinstance(book_ext, dict) and isinstance(book_ext.get(NATIVE_EXTENSION), dict):
        native = book_ext[NATIVE_EXTENSION]
        if isinstance(native.get("metadata"), dict):
            metadata.update(native["metadata"])
        settings["extensions"] = {k: v for k, v in book_ext.items() if k != NATIVE_EXTENSION}
        if not settings["extensions"]:
            del settings["extensions"]
    if settings:
        metadata["character_book"] = settings
        report.warn(
            "book_settings_not_applied",
            "character_book settings (" + ", ".join(sorted(settings)) + ") are kept in "
            "metadata; selection uses the request's scan depth and budget",
        )
    if card_name:
        metadata["card_name"] = card_name
    book["metadata"] = metadata
    return book
