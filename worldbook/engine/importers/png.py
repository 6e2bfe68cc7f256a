"""Reading the card JSON embedded in a PNG, without decoding the image.

Cards keep their JSON base64-encoded in a text chunk: ``chara`` (CCv2) or ``ccv3`` (CCv3).
We walk the chunk list ourselves instead of asking Pillow, because we never need pixels and
a hand walk lets every limit be exact:

* every chunk's length is bounded by the file, every CRC is checked, the file must start
  with the PNG signature and ``IHDR`` and reach ``IEND`` (otherwise ``invalid_png``);
* only ``chara``/``ccv3`` chunks are decompressed, with ``zlib.decompressobj`` asked for at
  most ``limit + 1`` bytes, so a zTXt/iTXt bomb fails with ``decompression_bomb`` after
  allocating ``limit`` bytes, never the whole output;
* nothing is executed or fetched: the result is a dict handed to the card mapper.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from typing import Any

from worldbook.engine.importers.errors import (
    DECOMPRESSION_BOMB,
    INVALID_CARD,
    INVALID_PNG,
    NOT_A_CARD,
    ImportFailure,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CARD_KEYWORDS = ("ccv3", "chara")  # in order of preference
_TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt")
_MAX_CHUNK_LENGTH = 2**31 - 1  # the PNG spec's limit


def _bad(message: str, **details: Any) -> ImportFailure:
    return ImportFailure(INVALID_PNG, message, details)


def iter_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """``(type, body)`` of every chunk up to ``IEND``, after structural and CRC checks."""
    if not data.startswith(PNG_SIGNATURE):
        raise _bad("not a PNG file (bad signature)")
    chunks: list[tuple[bytes, bytes]] = []
    position = len(PNG_SIGNATURE)
    while True:
        if position + 8 > len(data):
            raise _bad("the PNG is truncated (no IEND chunk)", offset=position)
        length = int.from_bytes(data[position : position + 4], "big")
        kind = data[position + 4 : position + 8]
        if length > _MAX_CHUNK_LENGTH or not kind.isalpha():
            raise _bad("corrupt PNG chunk header", offset=position)
        end = position + 8 + length
        if end + 4 > len(data):
            raise _bad(f"the PNG is truncated inside a {kind.decode('ascii')} chunk")
        body = data[position + 8 : end]
        expected = int.from_bytes(data[end : end + 4], "big")
        if zlib.crc32(kind + body) != expected:
            raise _bad(f"CRC mismatch in a {kind.decode('ascii')} chunk", offset=position)
        if not chunks and kind != b"IHDR":
            raise _bad("the PNG does not start with an IHDR chunk")
        chunks.append((kind, body))
        position = end + 4
        if kind == b"IEND":
            return chunks


def inflate(blob: bytes, limit: int) -> bytes:
    """Decompress a zlib stream, refusing (early) any output longer than ``limit`` bytes."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(blob, limit + 1)
    except zlib.error as exc:
        raise _bad(f"a compressed text chunk is corrupt ({exc})") from exc
    if len(out) > limit:
        raise ImportFailure(
            DECOMPRESSION_BOMB,
            f"a compressed text chunk inflates past the {limit}-byte limit",
            {"limit": limit},
        )
    if not inflater.eof:
        raise _bad("a compressed text chunk is truncated")
    return out


def text_chunk(kind: bytes, body: bytes, budget: int) -> tuple[str, bytes] | None:
    """``(keyword, raw text bytes)`` of a card text chunk, or ``None`` for other chunks."""
    keyword, sep, rest = body.partition(b"\x00")
    if not sep:
        return None
    name = keyword.decode("latin-1").lower()
    if name not in CARD_KEYWORDS:
        return None
    if kind == b"tEXt":
        return name, rest
    if kind == b"zTXt":
        if not rest or rest[0] != 0:
            raise _bad("zTXt chunk with an unknown compression method")
        return name, inflate(rest[1:], budget)
    # iTXt: flag, method, language\0, translated keyword\0, text
    if len(rest) < 2:
        raise _bad("iTXt chunk is truncated")
    compressed, method = rest[0], rest[1]
    _, sep1, tail = rest[2:].partition(b"\x00")
    _, sep2, text = tail.partition(b"\x00")
    if not (sep1 and sep2):
        raise _bad("iTXt chunk is truncated")
    if compressed:
        if method != 0:
            raise _bad("iTXt chunk with an unknown compression method")
        return name, inflate(text, budget)
    return name, text


def card_texts(data: bytes, limit: int) -> dict[str, bytes]:
    """The first ``chara`` and ``ccv3`` texts of a PNG, decompressed within ``limit`` bytes
    in total (Pillow's ``MAX_TEXT_MEMORY`` idea, applied per call)."""
    found: dict[str, bytes] = {}
    budget = limit
    for kind, body in iter_chunks(data):
        if kind not in _TEXT_CHUNKS:
            continue
        chunk = text_chunk(kind, body, budget)
        if chunk is None or chunk[0] in found:
            continue
        name, text = chunk
        budget -= len(text)
        if budget < 0:
            raise ImportFailure(
                DECOMPRESSION_BOMB, f"card text chunks exceed {limit} bytes", {"limit": limit}
            )
        found[name] = text
    return found


def decode_card(text: bytes, keyword: str) -> dict[str, Any]:
    """The card object in a text chunk: base64 of UTF-8 JSON (plain JSON is tolerated)."""
    stripped = text.strip()
    if not stripped.startswith(b"{"):
        compact = b"".join(stripped.split())
        compact += b"=" * (-len(compact) % 4)
        try:
            stripped = base64.b64decode(compact, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ImportFailure(
                INVALID_CARD, f"the {keyword} chunk is not valid base64", {"chunk": keyword}
            ) from exc
    try:
        card = json.loads(stripped.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ImportFailure(
            INVALID_CARD, f"the {keyword} chunk does not hold valid JSON", {"chunk": keyword}
        ) from exc
    if not isinstance(card, dict):
        raise ImportFailure(
            INVALID_CARD, f"the {keyword} chunk does not hold a JSON object", {"chunk": keyword}
        )
    return card


def read_png_card(data: bytes, limit: int) -> tuple[dict[str, Any], str, list[str]]:
    """``(card, chunk keyword used, warnings)``; ``ccv3`` is preferred over ``chara``.

    A broken ``ccv3`` chunk falls back to ``chara`` (with a warning) because many tools
    write both and only update one of them.
    """
    texts = card_texts(data, limit)
    if not texts:
        raise ImportFailure(NOT_A_CARD, "the PNG has no chara or ccv3 card chunk", {})
    warnings: list[str] = []
    failure: ImportFailure | None = None
    for keyword in CARD_KEYWORDS:
        if keyword not in texts:
            continue
        try:
            return decode_card(texts[keyword], keyword), keyword, warnings
        except ImportFailure as exc:
            failure = failure or exc
            warnings.append(f"the {keyword} chunk is unreadable ({exc.message}); tried the next")
    assert failure is not None
    raise failure
