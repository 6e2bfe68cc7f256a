"""Export a native book as canonical native JSON or as a SillyTavern world-info file.

The SillyTavern export is built so that importing it gives the same entries back:

* every field ST has is written under its ST name and number (position, logic, role);
* fields ST lacks (``required``, ``conditions``, ``requires``, ``priority``,
  ``conflict_key``, ``kind``, ``audience``, ``runtime_requirements``, ``metadata``) and the
  entry ``id`` travel in ``entry["extensions"]["roleplay_native"]``, which ST keeps untouched
  when it saves the file; book name, description and metadata travel in the file's
  top-level ``extensions`` the same way;
* content that starts with ``@@`` gets ST's ``@@@`` escape so that it is not read back as
  card decorators;
* ST-only fields an entry was imported with (``automationId``, ``triggers``,
  ``characterFilter``...) are written back from the entry's ``source``.

``source`` itself is provenance of an import and is not exported.
"""

from __future__ import annotations

from typing import Any, Literal

from worldbook.engine.importers.normalize import NATIVE_ONLY_FIELDS
from worldbook.engine.importers.sillytavern import (
    LOGICS,
    NATIVE_EXTENSION,
    POSITIONS,
    ROLES,
    UNMAPPED_DEFAULTS,
)
from worldbook.engine.schema import BookIn, EntryIn

ExportFormat = Literal["native", "sillytavern"]

_NATIVE_DEFAULTS = EntryIn(content="").model_dump(mode="json")
# ST fields we do not execute, written with their defaults (or the imported values). The
# editor-only ``characterFilterNames``/``Tags``/``Exclude`` are left to ST to derive.
_ST_ONLY_FIELDS = tuple(
    name
    for name in UNMAPPED_DEFAULTS
    if name == "characterFilter" or not (name == "extensions" or name.startswith("characterFilter"))
)


def export_book(book: dict[str, Any], fmt: ExportFormat) -> dict[str, Any]:
    """The book in ``fmt``; ``book`` is validated as :class:`BookIn` first (ValueError)."""
    model = BookIn.model_validate(book)
    if fmt == "native":
        return model.model_dump(mode="json")
    if fmt == "sillytavern":
        return to_sillytavern(model)
    raise ValueError(f"unknown export format {fmt!r}")


def to_sillytavern(book: BookIn) -> dict[str, Any]:
    """A world-info object ``{"entries": {"0": {...}}, "extensions": {...}}``."""
    entries = {
        str(index): st_entry(entry.model_dump(mode="json"), index)
        for index, entry in enumerate(book.entries)
    }
    native = {"name": book.name, "description": book.description, "metadata": book.metadata}
    return {"entries": entries, "extensions": {NATIVE_EXTENSION: native}}


def st_entry(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """One native entry (as a JSON dump of ``EntryIn``) as an ST world-info entry."""
    content = entry["content"]
    if content.startswith("@@"):
        content = "@" + content
    st: dict[str, Any] = {
        "uid": index,
        "key": list(entry["keys"]),
        "keysecondary": list(entry["secondary_keys"]),
        "comment": entry["title"],
        "content": content,
        "constant": entry["constant"],
        "vectorized": entry["vectorized"],
        "selective": entry["selective"],
        "selectiveLogic": LOGICS.index(entry["logic"]),
        "addMemo": bool(entry["title"]),
        "order": entry["order"],
        "position": POSITIONS.index(entry["position"]),
        "disable": not entry["enabled"],
        "excludeRecursion": entry["exclude_recursion"],
        "preventRecursion": entry["prevent_recursion"],
        "delayUntilRecursion": entry["delay_until_recursion"],
        "probability": entry["probability"],
        "useProbability": True,
        "depth": entry["depth"],
        "outletName": entry["outlet_name"] or "",
        "group": entry["group"],
        "groupOverride": entry["group_override"],
        "groupWeight": entry["group_weight"],
        "scanDepth": entry["scan_depth"],
        "caseSensitive": entry["case_sensitive"],
        "matchWholeWords": entry["match_whole_words"],
        "useGroupScoring": entry["use_group_scoring"],
        "role": ROLES.index(entry["role"]),
        "sticky": entry["sticky"],
        "cooldown": entry["cooldown"],
        "delay": entry["delay"],
        "displayIndex": index,
    }
    for name in _ST_ONLY_FIELDS:
        st[name] = _copy(UNMAPPED_DEFAULTS[name])
    other_extensions: dict[str, Any] = {}
    source = entry.get("source") or {}
    fields = source.get("fields") if source.get("format") == "sillytavern" else None
    if isinstance(fields, dict):
        for name in _ST_ONLY_FIELDS:
            if name in fields:
                st[name] = fields[name]
        if isinstance(fields.get("extensions"), dict):
            other_extensions = dict(fields["extensions"])
    extras: dict[str, Any] = {"id": entry["id"]}
    for name in NATIVE_ONLY_FIELDS:
        if entry[name] != _NATIVE_DEFAULTS[name]:
            extras[name] = entry[name]
    st["extensions"] = {**other_extensions, NATIVE_EXTENSION: extras}
    return st


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value
