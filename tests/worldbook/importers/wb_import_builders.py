"""Builders for SillyTavern files, character cards and PNG files, made inside the tests."""

from __future__ import annotations

import base64
import io
import json
import struct
import zlib
from typing import Any

from PIL import Image
from PIL.PngImagePlugin import PngInfo

from worldbook.engine.schema import BookIn


def st_entry(uid: int, **overrides: Any) -> dict[str, Any]:
    """A complete ST entry as ST 1.12+ writes it, with ST's defaults."""
    entry: dict[str, Any] = {
        "uid": uid,
        "key": [],
        "keysecondary": [],
        "comment": "",
        "content": "",
        "constant": False,
        "vectorized": False,
        "selective": True,
        "selectiveLogic": 0,
        "addMemo": True,
        "order": 100,
        "position": 0,
        "disable": False,
        "ignoreBudget": False,
        "excludeRecursion": False,
        "preventRecursion": False,
        "matchPersonaDescription": False,
        "matchCharacterDescription": False,
        "matchCharacterPersonality": False,
        "matchCharacterDepthPrompt": False,
        "matchScenario": False,
        "matchCreatorNotes": False,
        "delayUntilRecursion": False,
        "probability": 100,
        "useProbability": True,
        "depth": 4,
        "outletName": "",
        "group": "",
        "groupOverride": False,
        "groupWeight": 100,
        "scanDepth": None,
        "caseSensitive": None,
        "matchWholeWords": None,
        "useGroupScoring": None,
        "automationId": "",
        "role": None,
        "sticky": 0,
        "cooldown": 0,
        "delay": 0,
        "triggers": [],
        "displayIndex": uid,
        "characterFilter": {"isExclude": False, "names": [], "tags": []},
    }
    entry.update(overrides)
    return entry


def st_file(*entries: dict[str, Any], **top: Any) -> bytes:
    data = {"entries": {str(e["uid"]): e for e in entries}, **top}
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def card_entry(entry_id: int, **overrides: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "keys": ["gate"],
        "content": "The gate is shut at night.",
        "extensions": {},
        "enabled": True,
        "insertion_order": 10,
        "case_sensitive": False,
        "name": "",
        "priority": 0,
        "id": entry_id,
        "comment": "Gate",
        "selective": False,
        "secondary_keys": [],
        "constant": False,
        "position": "before_char",
    }
    entry.update(overrides)
    return entry


def card(spec: str, book: dict[str, Any] | None, name: str = "Guard") -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": name,
        "description": "A guard at the grey port.",
        "first_mes": "Halt.",
        "extensions": {},
    }
    if book is not None:
        data["character_book"] = book
    version = "2.0" if spec == "chara_card_v2" else "3.0"
    return {"spec": spec, "spec_version": version, "data": data}


def b64_json(value: Any) -> str:
    return base64.b64encode(json.dumps(value).encode("utf-8")).decode("ascii")


def pillow_png(text_chunks: dict[str, str], *, compressed: bool = False) -> bytes:
    """A real 2x2 PNG written by Pillow with the given text chunks (zTXt when compressed)."""
    info = PngInfo()
    for key, value in text_chunks.items():
        if compressed:
            info.add_text(key, value, zip=True)
        else:
            info.add_text(key, value)
    out = io.BytesIO()
    Image.new("RGB", (2, 2), (200, 120, 40)).save(out, format="PNG", pnginfo=info)
    return out.getvalue()


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def raw_png(*chunks: bytes) -> bytes:
    """A hand-assembled 1x1 PNG with ``chunks`` inserted after IHDR."""
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    idat = chunk(b"IDAT", zlib.compress(b"\x00\x00"))
    return b"\x89PNG\r\n\x1a\n" + ihdr + b"".join(chunks) + idat + chunk(b"IEND", b"")


def valid(book: dict[str, Any]) -> BookIn:
    """Every importer output must validate as a native draft book."""
    return BookIn.model_validate(book)


def entry_by_id(book: dict[str, Any], entry_id: str) -> dict[str, Any]:
    return next(e for e in book["entries"] if e["id"] == entry_id)
