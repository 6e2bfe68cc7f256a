"""Builders shared by the worldbook API tests: books, SillyTavern files, cards, PNGs, counts.

Everything a test uploads is built here from scratch (Pillow writes the PNGs), so each test
shows exactly which bytes reach the importer.
"""

from __future__ import annotations

import base64
import io
import json
import zlib
from typing import Any

from PIL import Image
from PIL.PngImagePlugin import PngInfo

from console.models import IdempotencyRecord
from tests.worldbook.importers.wb_import_builders import chunk as png_chunk
from worldbook.models import (
    Book,
    BookIndex,
    BookRevision,
    FileImport,
    PromptBinding,
    TimedEffectState,
)


def entry(entry_id: str, content: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"id": entry_id, "content": content or f"content of {entry_id}", **fields}


def book(name: str = "Book", *entries: dict[str, Any], **fields: Any) -> dict[str, Any]:
    if not entries:
        entries = (entry("e1", keys=["lighthouse"]),)
    return {"name": name, "entries": list(entries), **fields}


def error(res) -> dict[str, Any]:
    """The error object of a response, after checking the one error shape."""
    body = res.json()
    assert set(body) >= {"error"}, body
    err = body["error"]
    assert set(err) == {"code", "message", "details"}, err
    assert isinstance(err["message"], str) and err["message"], err
    return err


def create(api, payload: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
    """POST /v1/books and return the created ``{"book_id", "revision", ...}``."""
    res = api.post("/v1/books", payload or book(), format="json", **headers)
    assert res.status_code == 201, res.content
    return res.json()["books"][0]


def publish(api, book_id: str, payload: dict[str, Any], expected: int):
    return api.post(
        f"/v1/books/{book_id}/revisions",
        {**payload, "expected_revision": expected},
        format="json",
    )


def select_body(book_id: str, query: str, **fields: Any) -> dict[str, Any]:
    return {"books": [{"book_id": book_id}], "query": query, **fields}


def counts() -> dict[str, int]:
    """Row counts of everything a worldbook write could touch (for "writes nothing")."""
    return {
        "books": Book.objects.count(),
        "revisions": BookRevision.objects.count(),
        "file_imports": FileImport.objects.count(),
        "bindings": PromptBinding.objects.count(),
        "indexes": BookIndex.objects.count(),
        "timed": TimedEffectState.objects.count(),
        "idempotency": IdempotencyRecord.objects.count(),
    }


# --- SillyTavern world info and character cards ---------------------------------------------


def st_entry(uid: int, **overrides: Any) -> dict[str, Any]:
    """An ST world-info entry with the fields ST writes (most of them at ST defaults)."""
    data: dict[str, Any] = {
        "uid": uid,
        "key": [],
        "keysecondary": [],
        "comment": "",
        "content": "",
        "constant": False,
        "selective": True,
        "selectiveLogic": 0,
        "order": 100,
        "position": 0,
        "disable": False,
        "excludeRecursion": False,
        "preventRecursion": False,
        "probability": 100,
        "useProbability": True,
        "depth": 4,
        "group": "",
        "scanDepth": None,
        "caseSensitive": None,
        "matchWholeWords": None,
        "role": None,
        "sticky": 0,
        "cooldown": 0,
        "delay": 0,
    }
    data.update(overrides)
    return data


def st_world(*entries: dict[str, Any], as_array: bool = False, **top: Any) -> bytes:
    if as_array:
        body: Any = list(entries)
    else:
        body = {str(e["uid"]): e for e in entries}
    return json.dumps({"entries": body, **top}, ensure_ascii=False).encode("utf-8")


def card(version: int, entries: list[dict[str, Any]], name: str = "Guard") -> dict[str, Any]:
    spec = "chara_card_v2" if version == 2 else "chara_card_v3"
    return {
        "spec": spec,
        "spec_version": "2.0" if version == 2 else "3.0",
        "data": {
            "name": name,
            "description": "A guard at the grey port.",
            "first_mes": "Halt.",
            "extensions": {},
            "character_book": {"name": f"{name}'s book", "entries": entries},
        },
    }


def b64_json(value: Any) -> str:
    return base64.b64encode(json.dumps(value, ensure_ascii=False).encode("utf-8")).decode()


def card_png(text_chunks: dict[str, str], *, compressed: bool = False) -> bytes:
    """A real PNG written by Pillow carrying ``text_chunks`` (zTXt when ``compressed``)."""
    info = PngInfo()
    for keyword, text in text_chunks.items():
        info.add_text(keyword, text, zip=compressed)
    out = io.BytesIO()
    Image.new("RGB", (4, 4), (180, 110, 50)).save(out, format="PNG", pnginfo=info)
    return out.getvalue()


def bomb_png(inflated_bytes: int) -> bytes:
    """A PNG whose ``chara`` zTXt chunk inflates to ``inflated_bytes`` of zeros."""
    compressor = zlib.compressobj(9)
    step = b"\x00" * (1 << 20)
    blob = b"".join(compressor.compress(step) for _ in range(inflated_bytes // len(step)))
    blob += compressor.flush()
    plain = card_png({})
    iend = plain.rindex(b"IEND") - 4
    return plain[:iend] + png_chunk(b"zTXt", b"chara\x00\x00" + blob) + plain[iend:]
