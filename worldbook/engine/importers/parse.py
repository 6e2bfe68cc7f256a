"""The file-import entry point: bytes in, a native draft book and its report out.

The upload endpoint accepts SillyTavern world-info JSON, CCv2/CCv3 cards (JSON or PNG) and
the lorebooks of NovelAI, Agnai and RisuAI (``lorebooks``).
Native book JSON is deliberately *not* accepted here: the seed keeps native books on
``/v1/books`` (and batches on ``/v1/imports``), because a file import re-normalises fields
with ST semantics and would quietly change a native book's meaning.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from worldbook.engine.importers.cards import card_spec, looks_like_v1_card, parse_card
from worldbook.engine.importers.errors import (
    FILE_TOO_LARGE,
    INVALID_CARD,
    INVALID_JSON,
    INVALID_PNG,
    NO_WORLDBOOK,
    TOO_MANY_ENTRIES,
    UNSUPPORTED_FORMAT,
    FileTooLarge,
    ImportFailure,
    TooManyEntries,
)
from worldbook.engine.importers.lorebooks import (
    LOREBOOK_FORMATS,
    lorebook_format,
    parse_lorebook,
    source_entries,
)
from worldbook.engine.importers.normalize import MAX_BOOK_NAME_CHARS, MAX_DESCRIPTION_CHARS
from worldbook.engine.importers.png import PNG_SIGNATURE, read_png_card
from worldbook.engine.importers.report import ImportReport
from worldbook.engine.importers.sillytavern import parse_sillytavern, raw_entries
from worldbook.engine.schema import MAX_ENTRIES

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_BOOK_NAME = "Imported worldbook"

_ST_MARKERS = frozenset(
    {"key", "keysecondary", "uid", "disable", "selectiveLogic", "excludeRecursion", "addMemo"}
)
_CARD_BOOK_MARKERS = frozenset({"insertion_order", "use_regex", "extensions"})
_NATIVE_MARKERS = frozenset(
    {"title", "logic", "audience", "conflict_key", "required", "requires", "kind", "conditions"}
)
_NATIVE_HINT = (
    "this looks like a native book: submit it to POST /v1/books (or {'books': [...]} to "
    "POST /v1/imports); the file upload only reads SillyTavern world info and character cards"
)


@dataclass(frozen=True, slots=True)
class ImportResult:
    """A draft book (validates as ``BookIn``), its import report, format and file hash."""

    book: dict[str, Any]
    report: dict[str, Any]
    format: str
    sha256: str


def admitted(
    data: bytes, max_bytes: int, too_large: Callable[..., Exception] = FileTooLarge
) -> str:
    """An uploaded file's SHA-256 once it is within ``max_bytes`` (a book's or a card's
    file alike); over it, ``too_large`` (``file_too_large``, with its size and the limit)."""
    if len(data) > max_bytes:
        raise too_large(
            FILE_TOO_LARGE,
            f"the file has {len(data)} bytes; the limit is {max_bytes}",
            {"size": len(data), "limit": max_bytes},
        )
    return hashlib.sha256(data).hexdigest()


def parse_import(filename: str, data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    """Parse one uploaded file; raises :class:`ImportFailure` with a stable code."""
    sha256 = admitted(data, max_bytes)
    warnings: list[str] = []
    if data.startswith(PNG_SIGNATURE):
        card, keyword, warnings = read_png_card(data, max_bytes)
        fmt = card_spec(card)
        if fmt is None:
            code, message = _card_without_book(card, f"the PNG's {keyword} chunk")
            if code == UNSUPPORTED_FORMAT:
                code = INVALID_CARD
            raise ImportFailure(code, message, {"chunk": keyword})
        obj: dict[str, Any] = card
    elif filename.lower().endswith(".png"):
        raise ImportFailure(INVALID_PNG, "not a PNG file (bad signature)", {})
    else:
        obj = load_json(data)
        fmt = detect_format(obj)
    report = ImportReport(format=fmt, source_sha256=sha256)
    for message in warnings:
        report.warn("card_chunk_fallback", message)
    _check_entry_count(obj, fmt)
    if fmt == "sillytavern":
        book = parse_sillytavern(obj, report)
    elif fmt in LOREBOOK_FORMATS:
        book = parse_lorebook(obj, fmt, report)
    elif "entries" in obj and "data" not in obj:
        report.warn("bare_character_book", "a bare character_book (no card around it)")
        book = parse_card({"data": {"character_book": obj}}, fmt, report)
    else:
        book = parse_card(obj, fmt, report)
    book = _finish_book(book, filename, fmt, sha256, report)
    return ImportResult(book=book, report=report.to_dict(), format=fmt, sha256=sha256)


def load_json(data: bytes) -> Any:
    """An uploaded JSON file as Python values (UTF-8, a BOM allowed; no NaN or Infinity);
    each problem is an ``invalid_json`` failure. Public: the character card reader uses it."""

    def reject_constant(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON")

    try:
        return json.loads(data.decode("utf-8-sig"), parse_constant=reject_constant)
    except UnicodeDecodeError as exc:
        raise ImportFailure(INVALID_JSON, "the file is not UTF-8 text", {}) from exc
    except RecursionError as exc:
        raise ImportFailure(INVALID_JSON, "the JSON is nested too deeply", {}) from exc
    except ValueError as exc:
        raise ImportFailure(INVALID_JSON, f"the file is not valid JSON: {exc}", {}) from exc


def _card_without_book(obj: dict[str, Any], where: str) -> tuple[str, str]:
    if looks_like_v1_card(obj):
        return NO_WORLDBOOK, f"{where} is a CCv1 card, which cannot hold a worldbook"
    return UNSUPPORTED_FORMAT, f"{where} does not hold a chara_card_v2/v3 card"


def detect_format(obj: Any) -> str:
    """``sillytavern``, ``ccv2``, ``ccv3``, ``novelai``, ``agnai`` or ``risuai`` for a parsed
    JSON upload; raises otherwise."""
    if not isinstance(obj, dict):
        raise ImportFailure(UNSUPPORTED_FORMAT, "the JSON is not an object", {})
    spec = card_spec(obj)
    if spec is not None:
        return spec
    if isinstance(obj.get("spec"), str):
        raise ImportFailure(
            UNSUPPORTED_FORMAT, f"unsupported card spec {obj['spec']!r}", {"spec": obj["spec"]}
        )
    if isinstance(obj.get("books"), list):
        raise ImportFailure(UNSUPPORTED_FORMAT, _NATIVE_HINT, {"hint": "/v1/imports"})
    if looks_like_v1_card(obj):
        raise ImportFailure(*_card_without_book(obj, "the file"), {})
    other = lorebook_format(obj)
    if other:
        return other
    entries = obj.get("entries")
    if isinstance(entries, dict):
        return "sillytavern"
    if not isinstance(entries, list):
        raise ImportFailure(
            UNSUPPORTED_FORMAT,
            "not a SillyTavern world-info file or a character card (no 'entries' or 'spec')",
            {},
        )
    fields: set[str] = set()
    for entry in entries:
        if isinstance(entry, dict):
            fields.update(entry)
    if fields & _CARD_BOOK_MARKERS and "keys" in fields and "key" not in fields:
        return "ccv2"  # a card's book on its own (CHub's lorebooks), ST's markers or not
    if fields & _ST_MARKERS:
        return "sillytavern"
    if fields & _CARD_BOOK_MARKERS:
        return "ccv2"
    if fields & _NATIVE_MARKERS or not entries and {"description", "metadata"} & set(obj):
        raise ImportFailure(UNSUPPORTED_FORMAT, _NATIVE_HINT, {"hint": "/v1/books"})
    if not entries:
        return "sillytavern"
    raise ImportFailure(
        UNSUPPORTED_FORMAT,
        "the entries match neither SillyTavern nor a card's fields; a native book goes to "
        "POST /v1/books",
        {},
    )


def _check_entry_count(obj: dict[str, Any], fmt: str) -> None:
    if fmt == "sillytavern":
        count = len(raw_entries(obj.get("entries")))
    elif fmt in LOREBOOK_FORMATS:
        count = len(source_entries(obj, fmt))
    else:
        inner = obj.get("data")
        book = inner.get("character_book") if isinstance(inner, dict) else obj
        entries = book.get("entries") if isinstance(book, dict) else None
        count = len(entries) if isinstance(entries, list | dict) else 0
    if count > MAX_ENTRIES:
        raise TooManyEntries(
            TOO_MANY_ENTRIES,
            f"the book has {count} entries; the limit is {MAX_ENTRIES}",
            {"count": count, "limit": MAX_ENTRIES},
        )


def file_stem(filename: str) -> str:
    """The file's name without folders or a .json/.png/.lorebook extension."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".json", ".png", ".lorebook"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name.strip()


def _finish_book(
    book: dict[str, Any], filename: str, fmt: str, sha256: str, report: ImportReport
) -> dict[str, Any]:
    name = str(book.get("name") or "").strip() or file_stem(filename) or DEFAULT_BOOK_NAME
    if len(name) > MAX_BOOK_NAME_CHARS:
        report.warn("name_truncated", f"the book name was cut to {MAX_BOOK_NAME_CHARS} chars")
        name = name[:MAX_BOOK_NAME_CHARS].rstrip() or DEFAULT_BOOK_NAME
    description = str(book.get("description") or "")
    if len(description) > MAX_DESCRIPTION_CHARS:
        report.warn(
            "description_truncated",
            f"the description was cut to {MAX_DESCRIPTION_CHARS} characters",
        )
        description = description[:MAX_DESCRIPTION_CHARS]
    metadata = dict(book.get("metadata") or {})
    metadata["import"] = {"format": fmt, "filename": filename[:300], "source_sha256": sha256}
    if not book["entries"]:
        report.warn("empty_book", "the file has no entries; the book will be empty")
    return {
        "name": name,
        "description": description,
        "entries": book["entries"],
        "metadata": metadata,
    }
