"""Lorebooks of other tools -> SillyTavern world-info, which the SillyTavern reader then maps.

SillyTavern imports these three the same way (``convertNovelLorebook``,
``convertAgnaiMemoryBook``, ``convertRisuLorebook``); a user coming from it expects them
to arrive as they do there:

* **NovelAI** (``.lorebook``, ``lorebookVersion``): ``text``, ``keys``, ``displayName``,
  ``enabled``, ``contextConfig.budgetPriority`` as the order.
* **Agnai** memory books (``kind: memory``): ``entry``, ``keywords``, ``name``,
  ``enabled``, ``weight`` as the order.
* **RisuAI** (``type: risu``, entries under ``data``): ``content``, ``key`` and
  ``secondkey`` (comma-separated), ``comment``, ``alwaysActive``, ``selective``,
  ``insertorder`` as the order, ``activationPercent`` as the probability.

Beyond SillyTavern's converters: NovelAI's ``forceActivation`` makes the entry constant
and an entry without ``enabled`` stays on; Agnai's ``priority`` becomes the native
priority (which entries survive the budget); a RisuAI entry with ``useRegex`` keeps its
key as one regular expression, and RisuAI folders (``mode: folder``) are skipped and
reported. The tool's other fields are kept in each entry's ``source`` (and named once in
the report). Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from worldbook.engine.importers.errors import UNSUPPORTED_FORMAT, ImportFailure
from worldbook.engine.importers.report import ImportReport
from worldbook.engine.importers.sillytavern import NATIVE_EXTENSION, parse_sillytavern

NOVELAI, AGNAI, RISUAI = "novelai", "agnai", "risuai"
NOVELAI_DEFAULT_PRIORITY = 400  # NovelAI's own default budget priority
RISU_DEFAULT_ORDER = 100
LOREBOOK_FORMATS = frozenset({NOVELAI, AGNAI, RISUAI})


def lorebook_format(obj: dict[str, Any]) -> str | None:
    """The tool a lorebook JSON object comes from, as SillyTavern tells them apart."""
    if "lorebookVersion" in obj:
        return NOVELAI
    if obj.get("kind") == "memory":
        return AGNAI
    if obj.get("type") == "risu":
        return RISUAI
    return None


def source_entries(obj: dict[str, Any], fmt: str) -> list[Any]:
    """The lorebook's raw entries in file order; a missing list is a failure."""
    key = "data" if fmt == RISUAI else "entries"
    entries = obj.get(key)
    if not isinstance(entries, list):
        raise ImportFailure(
            UNSUPPORTED_FORMAT, f"the {fmt} lorebook has no '{key}' list", {"format": fmt}
        )
    return entries


def parse_lorebook(obj: dict[str, Any], fmt: str, report: ImportReport) -> dict[str, Any]:
    """Map a whole lorebook (the caller adds name fallbacks and import metadata); each
    entry's ``source`` keeps the tool's fields that have no SillyTavern counterpart."""
    raw_entries = source_entries(obj, fmt)
    converted: dict[str, Any] = {}
    kept: list[dict[str, Any]] = []
    for index, raw in enumerate(raw_entries):
        if not isinstance(raw, dict):
            report.warn("entry_skipped", f"entry {index} is not an object; skipped")
            continue
        if fmt == RISUAI and raw.get("mode") == "folder":
            report.warn("folder_skipped", f"entry {index} is a RisuAI folder; skipped")
            continue
        entry, mapped = _CONVERTERS[fmt](raw)
        converted[str(index)] = {"uid": index, **entry}
        kept.append({name: value for name, value in raw.items() if name not in mapped})
    shell = {name: obj[name] for name in ("name", "description") if isinstance(obj.get(name), str)}
    book = parse_sillytavern({**shell, "entries": converted}, report)
    report.entry_count = len(raw_entries)
    for entry, fields in zip(book["entries"], kept, strict=True):
        entry["source"] = {"format": fmt, "fields": fields}
    unmapped = sorted({name for fields in kept for name in fields})
    if unmapped:
        report.warn(
            "fields_kept_in_source",
            f"{', '.join(unmapped)}: no counterpart here; kept in each entry's source only",
        )
    return book


def _novelai(raw: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    config = raw.get("contextConfig")
    priority = config.get("budgetPriority") if isinstance(config, dict) else None
    name = raw.get("displayName")
    entry = {
        "key": raw.get("keys", []),
        "comment": name if isinstance(name, str) else "",
        "content": raw.get("text", ""),
        "constant": raw.get("forceActivation") is True,
        "selective": False,
        "order": NOVELAI_DEFAULT_PRIORITY if priority is None else priority,
        "disable": raw.get("enabled") is False,
    }
    return entry, {"keys", "displayName", "text", "forceActivation", "enabled"}


def _agnai(raw: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    entry: dict[str, Any] = {
        "key": raw.get("keywords", []),
        "comment": raw.get("name", ""),
        "content": raw.get("entry", ""),
        "selective": False,
        "order": raw.get("weight", 0),
        "disable": raw.get("enabled") is False,
    }
    if raw.get("priority") is not None:
        entry["extensions"] = {NATIVE_EXTENSION: {"priority": raw["priority"]}}
    return entry, {"keywords", "name", "entry", "weight", "enabled", "priority"}


def _risu(raw: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    regex = raw.get("useRegex") is True
    percent = raw.get("activationPercent")
    order = raw.get("insertorder")
    entry = {
        "key": _risu_keys(raw.get("key"), regex),
        "keysecondary": _risu_keys(raw.get("secondkey"), regex),
        "comment": raw.get("comment", ""),
        "content": raw.get("content", ""),
        "constant": raw.get("alwaysActive") is True or raw.get("mode") == "constant",
        "selective": raw.get("selective") is True,
        "order": RISU_DEFAULT_ORDER if order is None else order,
        "probability": 100 if percent is None else percent,
    }
    mapped = {"key", "secondkey", "comment", "content", "alwaysActive", "selective", "mode"}
    return entry, mapped | {"insertorder", "activationPercent", "useRegex"}


def _risu_keys(value: Any, regex: bool) -> Any:
    """RisuAI's comma-separated keys as a list (one ``/regex/`` when ``useRegex``); other
    values pass through for the SillyTavern reader to report."""
    if not isinstance(value, str):
        return [] if value is None else value
    if regex:
        pattern = value.strip()
        return [pattern if pattern.startswith("/") else f"/{pattern}/"] if pattern else []
    return [key.strip() for key in value.split(",") if key.strip()]


_CONVERTERS: dict[str, Callable[[dict[str, Any]], tuple[dict[str, Any], set[str]]]] = {
    NOVELAI: _novelai,
    AGNAI: _agnai,
    RISUAI: _risu,
}
