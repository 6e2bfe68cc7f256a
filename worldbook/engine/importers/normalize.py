"""Field coercion shared by the SillyTavern and character-card mappers.

Files in the wild are loose: numbers arrive as strings, booleans as 0/1, keys as one comma
separated string, values out of range. Each reader method returns a value that fits the
native schema and records in the report whenever it had to change what the file said, so the
output always validates as a draft book and nothing changes silently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from worldbook.engine.importers.errors import ENTRY_TOO_LARGE, ImportFailure
from worldbook.engine.importers.report import ImportReport
from worldbook.engine.importers.runtime import runtime_requirements, unexpanded_macros
from worldbook.engine.keys import RegexKeyError, compile_regex_key, parse_regex_key
from worldbook.engine.schema import (
    MAX_CONTENT_CHARS,
    MAX_ENTRY_ID_CHARS,
    MAX_KEY_CHARS,
    MAX_KEYS,
    ORDER_LIMIT,
    EntryIn,
)

MAX_TITLE_CHARS = 500
MAX_BOOK_NAME_CHARS = 300
MAX_DESCRIPTION_CHARS = 10_000
MAX_OUTLET_CHARS = 100
MAX_GROUP_CHARS = 500
DURATION_LIMIT = 1_000_000
_NATIVE_DEFAULTS = EntryIn(content="").model_dump(mode="json")
_SHARED = frozenset(
    name for name, value in _NATIVE_DEFAULTS.items() if isinstance(value, str | int | float | None)
)


def _flat(value: Any) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return isinstance(value, list | dict) and all(
        isinstance(item, str | int | float | None) for item in items
    )


# The other defaults are flat lists and dicts of plain values: a shallow copy is a full one.
assert all(_flat(v) for name, v in _NATIVE_DEFAULTS.items() if name not in _SHARED)

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0", ""})

# Decorators of the CCv3 spec, recognised at the very start of an entry's content.
KNOWN_DECORATORS = frozenset(
    {
        "activate",
        "dont_activate",
        "depth",
        "instruct_depth",
        "reverse_depth",
        "reverse_instruct_depth",
        "role",
        "position",
        "scan_depth",
        "instruct_scan_depth",
        "activate_only_after",
        "activate_only_every",
        "keep_activate_after_match",
        "dont_activate_after_match",
        "is_greeting",
        "additional_keys",
        "exclude_keys",
        "is_user_icon",
        "disable_ui_prompt",
        "ignore_on_max_context",
    }
)
_DECORATOR_LINE = re.compile(r"^@@([a-z_]+)(?:[ \t]+(.*))?$")


class IdAllocator:
    """Unique entry ids in file order: the first claimant keeps an id, later ones get ``~2``…

    Deterministic, so importing the same file twice yields the same ids.
    """

    def __init__(self) -> None:
        self._used: set[str] = set()

    def allocate(self, candidate: str, fallback: str) -> str:
        base = candidate.strip()[:MAX_ENTRY_ID_CHARS] or fallback
        chosen = base
        counter = 2
        while chosen in self._used:
            suffix = f"~{counter}"
            chosen = base[: MAX_ENTRY_ID_CHARS - len(suffix)] + suffix
            counter += 1
        self._used.add(chosen)
        return chosen


class FieldReader:
    """Coerces one entry's raw values, reporting every change against ``entry_id``."""

    def __init__(
        self, report: ImportReport, entry_id: str, aliases: dict[str, str] | None = None
    ) -> None:
        self.report = report
        self.entry_id = entry_id
        # Card entries are read through the ST mapper; aliases report the card's own names.
        self.aliases = aliases or {}

    def lossy(self, field: str, value: Any, reason: str) -> None:
        self.report.lossy(self.entry_id, self.aliases.get(field, field), value, reason)

    def boolean(self, field: str, value: Any, default: bool) -> bool:
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        self.lossy(field, value, f"not a boolean; used {str(default).lower()}")
        return default

    def optional_boolean(self, field: str, value: Any) -> bool | None:
        return None if value is None else self.boolean(field, value, False)

    def integer(self, field: str, value: Any, default: int, low: int, high: int) -> int:
        number = self._number(field, value)
        if number is None:
            return default
        if number < low or number > high:
            clamped = max(low, min(high, number))
            self.lossy(field, value, f"out of range {low}..{high}; clamped to {clamped}")
            return clamped
        return number

    def optional_integer(self, field: str, value: Any, low: int, high: int) -> int | None:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        number = self._number(field, value)
        if number is None:
            return None
        if number < low or number > high:
            clamped = max(low, min(high, number))
            self.lossy(field, value, f"out of range {low}..{high}; clamped to {clamped}")
            return clamped
        return number

    def order(self, field: str, value: Any, default: int) -> int:
        return self.integer(field, value, default, -ORDER_LIMIT, ORDER_LIMIT)

    def _number(self, field: str, value: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if isinstance(value, float) and math.isfinite(value):
            if value != int(value):
                self.lossy(field, value, "not a whole number; rounded")
            return round(value)
        if isinstance(value, str):
            try:
                return self._number(field, float(value.strip()))
            except ValueError:
                pass
        self.lossy(field, value, "not a number; used the default")
        return None

    def text(self, field: str, value: Any, limit: int | None = None) -> str:
        """Text of a field; over ``limit`` it is cut and reported (no limit: content,
        whose size is checked once, in :func:`finish_entry`)."""
        if value is None:
            return ""
        text = value if isinstance(value, str) else str(value)
        if limit is not None and len(text) > limit:
            self.lossy(field, f"{len(text)} characters", f"longer than {limit}; truncated")
            return text[:limit]
        return text

    def keys(self, field: str, value: Any) -> list[str]:
        """Keys as a clean list: strings split on commas, blanks dropped, duplicates merged.

        SillyTavern trims keys before matching, so trimming here changes nothing; a regex key
        keeps its ``/pattern/flags`` spelling. Keys RE2 cannot run are dropped and reported,
        because the publish check would otherwise reject the whole book.
        """
        if value is None:
            return []
        raw: Iterable[Any]
        if isinstance(value, str):
            raw = value.split(",")
        elif isinstance(value, list | tuple):
            raw = value
        else:
            self.lossy(field, value, "keys are not a list; ignored")
            return []
        keys: list[str] = []
        seen: set[str] = set()
        for item in raw:
            if item is None or isinstance(item, dict | list):
                if item is not None:
                    self.lossy(field, item, "a key that is not text; dropped")
                continue
            key = str(item).strip()
            if not key or key in seen:
                continue
            seen.add(key)
            if len(key) > MAX_KEY_CHARS:
                self.lossy(field, key, f"key longer than {MAX_KEY_CHARS} characters; dropped")
                continue
            parsed = parse_regex_key(key)
            if parsed is not None:
                try:
                    compile_regex_key(parsed)
                except RegexKeyError as exc:
                    self.lossy(field, key, f"a regex that cannot run ({exc}); dropped")
                    continue
            keys.append(key)
        if len(keys) > MAX_KEYS:
            self.lossy(field, len(keys), f"more than {MAX_KEYS} keys; kept the first {MAX_KEYS}")
            keys = keys[:MAX_KEYS]
        return keys


def split_decorators(content: str) -> tuple[list[tuple[str, str]], str]:
    """Leading ``@@name value`` lines (CCv3 decorators) and the content after them.

    A leading ``@@@`` escapes a literal ``@@`` (one ``@`` is removed), as in SillyTavern. Only
    known decorator names count, so text that merely starts with ``@@`` stays as written.
    """
    if content.startswith("@@@"):
        return [], content[1:]
    if not content.startswith("@@"):
        return [], content
    lines = content.split("\n")
    decorators: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        match = _DECORATOR_LINE.match(lines[index].rstrip("\r"))
        if match is None or match.group(1) not in KNOWN_DECORATORS:
            break
        decorators.append((match.group(1), (match.group(2) or "").strip()))
        index += 1
    if not decorators:
        return [], content
    return decorators, "\n".join(lines[index:])


def apply_decorators(entry: dict[str, Any], reader: FieldReader) -> None:
    """Strip decorators from ``entry['content']`` and map the ones with a native meaning."""
    decorators, content = split_decorators(entry["content"])
    entry["content"] = content
    for name, value in decorators:
        if name == "activate":
            entry["constant"] = True
            reader.lossy("content", f"@@{name}", "decorator mapped to constant=true")
        elif name == "dont_activate":
            entry["enabled"] = False
            reader.lossy("content", f"@@{name}", "decorator mapped to enabled=false")
        elif name == "depth" and value.isdigit():
            entry["position"] = "at_depth"
            entry["depth"] = min(int(value), 10_000)
            reader.lossy("content", f"@@{name} {value}", "decorator mapped to position at_depth")
        elif name == "role" and value.lower() in ("system", "user", "assistant"):
            entry["role"] = value.lower()
            reader.lossy("content", f"@@{name} {value}", "decorator mapped to role")
        elif name == "scan_depth" and value.isdigit():
            entry["scan_depth"] = min(int(value), 100)
            reader.lossy("content", f"@@{name} {value}", "decorator mapped to scan_depth")
        else:
            reader.lossy("content", f"@@{name} {value}".strip(), "decorator not supported")


def finish_entry(entry: dict[str, Any], reader: FieldReader, title: str) -> dict[str, Any]:
    """Checks shared by every format, run once the fields are mapped.

    Content over the native limit fails the import rather than being cut: the seed never
    shortens an author's text behind their back.
    """
    content = entry["content"]
    if len(content) > MAX_CONTENT_CHARS:
        raise ImportFailure(
            ENTRY_TOO_LARGE,
            f"entry {reader.entry_id!r} has {len(content)} characters of content; "
            f"the limit is {MAX_CONTENT_CHARS}",
            {"entry_id": reader.entry_id, "length": len(content), "limit": MAX_CONTENT_CHARS},
        )
    if entry.get("position") == "outlet" and not entry.get("outlet_name"):
        # SillyTavern renders such an entry nowhere; keep it, disabled, under a placeholder
        # outlet so the book still publishes.
        entry["enabled"] = False
        entry["outlet_name"] = "unnamed"
        reader.lossy("outletName", "", "outlet position without an outlet name; disabled")
    needs = runtime_requirements(
        [content, *entry.get("keys", []), *entry.get("secondary_keys", [])]
    )
    existing = entry.get("runtime_requirements", [])
    entry["runtime_requirements"] = sorted(set(existing) | set(needs))
    if entry["runtime_requirements"]:
        reader.report.block(reader.entry_id, title, list(entry["runtime_requirements"]))
    macros = unexpanded_macros(content)
    if macros:
        reader.lossy(
            "content",
            ["{{" + name + "}}" for name in macros],
            "macros other than {{char}}/{{user}} are not expanded",
        )
    # Every native field, explicit and in schema order, so a preview shows the whole entry
    # (a default that can be changed in place is copied, the rest are shared).
    return {
        name: entry[name] if name in entry else default if name in _SHARED else default.copy()
        for name, default in _NATIVE_DEFAULTS.items()
    }


def report_unmapped(
    reader: FieldReader, raw: dict[str, Any], defaults: dict[str, Any], cosmetic: frozenset[str]
) -> dict[str, Any]:
    """Fields we keep only in ``source``; those with a non-default value are reported.

    ``defaults`` maps known unmapped fields to their do-nothing value; any field not in
    ``defaults`` is unknown and reported whenever it is present. ``cosmetic`` fields only
    affect the source editor's display and are never reported.
    """
    kept: dict[str, Any] = {}
    for name, value in raw.items():
        kept[name] = value
        if name in cosmetic:
            continue
        if name in defaults:
            if not _is_default(value, defaults[name]):
                reader.lossy(name, value, "not supported; kept in source only")
        else:
            reader.lossy(name, value, "unknown field; kept in source only")
    return kept


def _is_default(value: Any, default: Any) -> bool:
    if value == default:
        return True
    if value is None or value == "" or value == [] or value == {}:
        return default in (None, "", [], {}, False, 0)
    if isinstance(value, dict) and isinstance(default, dict):
        return all(
            _is_default(value.get(key), default.get(key)) for key in set(value) | set(default)
        )
    return False


# Native-only fields a SillyTavern export carries in its entries' extension (see exporter).
NATIVE_ONLY_FIELDS = (
    "required",
    "conditions",
    "requires",
    "priority",
    "conflict_key",
    "kind",
    "audience",
    "runtime_requirements",
    "metadata",
)


def native_extras(reader: FieldReader, extras: Any) -> dict[str, Any]:
    """Validated native-only fields from an exported entry's extension; bad ones dropped.

    Each field is checked against the native schema on its own, so one hand-edited value
    loses only itself (reported), not the entry or the whole import.
    """
    if not isinstance(extras, dict):
        if extras is not None:
            reader.lossy("extensions.roleplay_native", extras, "not an object; ignored")
        return {}
    kept: dict[str, Any] = {}
    for name in NATIVE_ONLY_FIELDS:
        if name not in extras:
            continue
        try:
            model = EntryIn.model_validate({"content": "", name: extras[name]})
        except ValidationError:
            reader.lossy(name, extras[name], "invalid native value; dropped")
            continue
        kept[name] = model.model_dump(mode="json")[name]
    return kept
