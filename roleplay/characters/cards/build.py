"""Building card files: CCv2 or CCv3 JSON, and the CCv3 PNG as SillyTavern writes it.

The PNG is the character's avatar (or a plain generated image) with two ``tEXt`` chunks
before ``IEND``, each the base64 of the card's UTF-8 JSON: ``chara`` holding the CCv2 card
and ``ccv3`` the CCv3 one. That is what SillyTavern writes (``character-card-parser.js``
``write``) and reads (``ccv3`` first), and what the CCv3 spec asks of a PNG that also
serves CCv2 readers. Text chunks the image already had for a card are removed first, so a
card is never written with two different ``chara`` chunks.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any, Literal

from roleplay.characters.cards.images import chunk_bytes
from roleplay.characters.cards.mapping import fields_to_card
from worldbook.engine.importers.png import CARD_KEYWORDS, PNG_SIGNATURE, iter_chunks

ExportFormat = Literal["ccv3_png", "ccv3_json", "ccv2_json"]
EXPORT_FORMATS: tuple[str, ...] = ("ccv3_png", "ccv3_json", "ccv2_json")
_TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt")
_UNSAFE = re.compile(r"[^\w.-]+")


def file_stem(name: str) -> str:
    """A card file's name without its extension, from the character's name (what
    SillyTavern then calls the character's avatar: ``Mira`` is ``Mira.png``)."""
    return (_UNSAFE.sub("_", name).strip("._") or "character")[:80]


def card_json(card: dict[str, Any]) -> bytes:
    return json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode()


def text_chunk(keyword: str, card: dict[str, Any]) -> bytes:
    """A ``tEXt`` chunk ``keyword`` holding base64 of the card's JSON."""
    body = keyword.encode("latin-1") + b"\x00" + base64.b64encode(card_json(card))
    return chunk_bytes(b"tEXt", body)


def _is_card_text(kind: bytes, body: bytes) -> bool:
    if kind not in _TEXT_CHUNKS:
        return False
    keyword = body.partition(b"\x00")[0].decode("latin-1").lower()
    return keyword in CARD_KEYWORDS


def png_card(image: bytes, cards: dict[str, dict[str, Any]]) -> bytes:
    """``image`` (a PNG) with a ``tEXt`` chunk per ``{keyword: card}`` before ``IEND``."""
    parts = [PNG_SIGNATURE]
    for kind, body in iter_chunks(image):
        if _is_card_text(kind, body):
            continue
        if kind == b"IEND":
            parts += [text_chunk(keyword, card) for keyword, card in cards.items()]
        parts.append(chunk_bytes(kind, body))
    return b"".join(parts)


def build_card(
    fields: dict[str, Any], fmt: str, *, book: dict[str, Any] | None, image: bytes | None
) -> bytes:
    """The card file of ``fmt``; ``image`` (a PNG) is required for ``ccv3_png``."""
    if fmt == "ccv2_json":
        return card_json(fields_to_card(fields, "ccv2", book))
    if fmt == "ccv3_json":
        return card_json(fields_to_card(fields, "ccv3", book))
    if fmt == "ccv3_png":
        if image is None:
            raise ValueError("a PNG card needs an image")
        cards = {
            "chara": fields_to_card(fields, "ccv2", book),
            "ccv3": fields_to_card(fields, "ccv3", book),
        }
        return png_card(image, cards)
    raise ValueError(f"unknown card format {fmt!r}")
