"""A native worldbook as a card's ``character_book``, written so our card importer (the
worldbook's ``importers.cards``) reads back the same entries, and SillyTavern reads it too.

It reuses the worldbook exporter's SillyTavern mapping (``st_entry``: every field under its
ST name and number, native-only fields in ``extensions.roleplay_native``) and renames the
result to the card's spelling with the card importer's own tables (``ENTRY_FIELDS``,
``EXTENSION_FIELDS``) read backwards, so the two directions cannot drift apart:

* every ST field the card importer maps travels in the entry's ``extensions`` under its
  card name (all eight positions, roles, groups, timed effects...), with the card spec's
  own ``position`` (``before_char``/``after_char``) beside it for other tools;
* ``use_regex`` is false: keys that are regexes are already spelled ``/pattern/flags``;
* fields an entry was imported with from a card and that we do not execute (its
  ``source.fields``) are written back where they came from.

Book-level settings a card carried (``scan_depth``, ``token_budget``, ``recursive_scanning``,
``extensions``) are restored from the book's metadata, and the rest of the metadata travels in
``extensions.roleplay_native`` as the importer expects.
"""

from __future__ import annotations

import copy
from typing import Any

from worldbook.engine.exporter import st_entry
from worldbook.engine.importers.cards import ENTRY_FIELDS, EXTENSION_FIELDS
from worldbook.engine.importers.sillytavern import NATIVE_EXTENSION
from worldbook.engine.schema import BookIn

_CARD_FORMATS = ("ccv2", "ccv3")
# Metadata the card importer writes itself on every import: not carried back.
_IMPORT_METADATA = ("character_book", "card_name", "import")


def to_character_book(book: dict[str, Any]) -> dict[str, Any]:
    """One native book (a ``BookIn`` body) as a ``character_book`` object."""
    model = BookIn.model_validate(book)
    entries = [
        card_entry(entry.model_dump(mode="json"), index)
        for index, entry in enumerate(model.entries)
    ]
    metadata = dict(model.metadata)
    settings = metadata.get("character_book")
    out: dict[str, Any] = {"name": model.name, "description": model.description}
    extensions: dict[str, Any] = {}
    if isinstance(settings, dict):
        for key in ("scan_depth", "token_budget", "recursive_scanning"):
            if key in settings:
                out[key] = settings[key]
        if isinstance(settings.get("extensions"), dict):
            extensions.update(copy.deepcopy(settings["extensions"]))
    native = {k: v for k, v in metadata.items() if k not in _IMPORT_METADATA}
    extensions[NATIVE_EXTENSION] = {"metadata": native}
    out["extensions"] = extensions
    out["entries"] = entries
    return out


def card_entry(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """One native entry (a JSON dump of ``EntryIn``) as a ``character_book`` entry."""
    st = st_entry(entry, index)
    source = entry.get("source") or {}
    from_card = source.get("format") in _CARD_FORMATS
    out: dict[str, Any] = {}
    if not from_card:
        out["id"] = index
    elif isinstance(source.get("id"), int | str):
        out["id"] = source["id"]  # the card's own id back (an entry without one gets none)
    out.update(
        {
            "enabled": not st["disable"],
            "position": "before_char" if st["position"] == 0 else "after_char",
            "use_regex": False,
            "comment": st["comment"],
        }
    )
    for card_name, st_name in ENTRY_FIELDS.items():
        out[card_name] = st[st_name]
    extensions = {card_name: st[st_name] for card_name, st_name in EXTENSION_FIELDS.items()}
    extensions[NATIVE_EXTENSION] = st["extensions"][NATIVE_EXTENSION]
    fields = source.get("fields") if from_card else None
    if isinstance(fields, dict):
        for name, value in fields.items():
            if name.startswith("extensions."):
                extensions.setdefault(name[len("extensions.") :], copy.deepcopy(value))
            else:
                out.setdefault(name, copy.deepcopy(value))
    out["extensions"] = extensions
    return out


def merge_books(books: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """Several bound books as one (a card holds one ``character_book``): entries in binding
    order, the first book's settings; entry ids that collide are renamed on import."""
    if len(books) == 1:
        return books[0]
    merged = copy.deepcopy(books[0])
    merged["name"] = name
    merged["entries"] = [entry for book in books for entry in book["entries"]]
    merged["metadata"] = {
        **merged.get("metadata", {}),
        "merged_books": [book["name"] for book in books],
    }
    return merged
