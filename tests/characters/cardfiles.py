"""Builders of card files for the character tests: cards of each spec, PNG and ``.charx``
containers, images of each format, and broken variants (bombs, bad CRCs, truncations)."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from typing import Any

from PIL import Image

from tests.worldbook.api.wb_api_helpers import bomb_png, card_png
from tests.worldbook.importers.wb_import_builders import chunk, raw_png

__all__ = ["bomb_png", "card_png", "chunk", "raw_png"]

BOOK = {
    "name": "Greyport lore",
    "description": "What Mira knows.",
    "scan_depth": 3,
    "entries": [
        {
            "id": 7,
            "keys": ["lighthouse", "lamp"],
            "secondary_keys": [],
            "content": "The lamp burns whale oil.",
            "enabled": True,
            "insertion_order": 50,
            "comment": "Lamp",
            "extensions": {"position": 4, "depth": 2, "role": 0, "automation_id": "x1"},
        },
        {
            "keys": ["gate"],
            "content": "The gate closes at dusk.",
            "enabled": True,
            "insertion_order": 100,
            "constant": True,
            "position": "before_char",
        },
    ],
}


def v2_card(name: str = "Mira", *, book: dict | None = None, **data: Any) -> dict[str, Any]:
    """A CCv2 card with every CCv2 field set (overridable through ``data``)."""
    body: dict[str, Any] = {
        "name": name,
        "description": "Keeper of the Greyport lighthouse.",
        "personality": "Dry-humoured, observant.",
        "scenario": "A foggy night at the lighthouse.",
        "first_mes": "A visitor, at this hour?",
        "mes_example": "<START>\n{{char}}: Tea?",
        "alternate_greetings": ["The lamp needs trimming.", "You again?"],
        "system_prompt": "You are {{char}}.",
        "post_history_instructions": "Stay in character.",
        "creator_notes": "Best with slow scenes.",
        "tags": ["lighthouse", "fantasy"],
        "creator": "anon",
        "character_version": "1.2",
        "extensions": {"talkativeness": "0.5", "fav": False, "depth_prompt": {"depth": 4}},
    }
    body.update(data)
    if book is not None:
        body["character_book"] = book
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": body}


def v3_card(name: str = "Mira", *, book: dict | None = None, **data: Any) -> dict[str, Any]:
    """A CCv3 card: the CCv2 fields plus every CCv3 extra."""
    extras = {
        "nickname": "Mi",
        "group_only_greetings": ["Everyone, sit down."],
        "creator_notes_multilingual": {"fr": "Pour les scènes lentes."},
        "source": ["https://example.org/mira"],
        "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}],
        "creation_date": 1700000000,
        "modification_date": 1700000100,
    }
    card = v2_card(name, book=book, **{**extras, **data})
    return {**card, "spec": "chara_card_v3", "spec_version": "3.0"}


def as_json(card: dict[str, Any]) -> bytes:
    return json.dumps(card, ensure_ascii=False).encode()


def b64(card: dict[str, Any]) -> str:
    return base64.b64encode(as_json(card)).decode()


def image_bytes(fmt: str = "PNG", size: tuple[int, int] = (8, 12), colour=(30, 90, 150)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format=fmt)
    return out.getvalue()


def png_card(card: dict[str, Any], keyword: str | None = None, size=(8, 12)) -> bytes:
    """A PNG with the card in a ``ccv3`` (CCv3) or ``chara`` (CCv2) tEXt chunk."""
    keyword = keyword or ("ccv3" if card.get("spec") == "chara_card_v3" else "chara")
    image = image_bytes("PNG", size)
    iend = image.rindex(b"IEND") - 4
    text = chunk(b"tEXt", keyword.encode() + b"\x00" + b64(card).encode())
    return image[:iend] + text + image[iend:]


def charx(
    card: dict[str, Any] | None,
    *,
    icon: bytes | None = None,
    icon_path: str = "assets/icon/images/main.png",
    members: dict[str, bytes] | None = None,
    compression: int = zipfile.ZIP_DEFLATED,
) -> bytes:
    """A ``.charx``: ``card.json`` (when ``card``), the icon at ``icon_path``, other members."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        if card is not None:
            if icon is not None:
                card = json.loads(json.dumps(card))
                card["data"]["assets"] = [
                    {"type": "icon", "uri": f"embeded://{icon_path}", "name": "main", "ext": "png"}
                ]
            archive.writestr("card.json", as_json(card))
        if icon is not None:
            archive.writestr(icon_path, icon)
        for name, body in (members or {}).items():
            archive.writestr(name, body)
    return out.getvalue()


def zip_bomb(inflated: int) -> bytes:
    """A ``.charx`` whose ``card.json`` inflates to ``inflated`` bytes of spaces."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("card.json", "w", force_zip64=True) as member:
            block = b" " * (1 << 20)
            for _ in range(inflated // len(block)):
                member.write(block)
    return out.getvalue()


def flip_crc(data: bytes, chunk_type: bytes) -> bytes:
    """``data`` with the CRC of its first ``chunk_type`` chunk broken."""
    at = data.index(chunk_type) - 4
    length = int.from_bytes(data[at : at + 4], "big")
    crc_at = at + 8 + length
    broken = bytes([data[crc_at] ^ 0xFF])
    return data[:crc_at] + broken + data[crc_at + 1 :]


def pixel_bomb_png(width: int = 30_000, height: int = 30_000) -> bytes:
    """A tiny PNG whose header claims ``width`` x ``height`` pixels."""
    import struct
    import zlib

    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
    idat = chunk(b"IDAT", zlib.compress(b"\x00" * 64))
    return b"\x89PNG\r\n\x1a\n" + ihdr + idat + chunk(b"IEND", b"")
