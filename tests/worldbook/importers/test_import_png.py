"""Cards embedded in PNG files: chunk kinds, preference, and every way a PNG can be bad."""

from __future__ import annotations

import struct
import zlib

import pytest
from wb_import_builders import b64_json, card, card_entry, chunk, pillow_png, raw_png, valid

from worldbook.engine.importers import ImportFailure, parse_import

V2 = card("chara_card_v2", {"name": "v2 book", "entries": [card_entry(0)]})
V3 = card("chara_card_v3", {"name": "v3 book", "entries": [card_entry(0), card_entry(1)]})


def failure(data: bytes, filename: str = "card.png", **kwargs) -> ImportFailure:
    with pytest.raises(ImportFailure) as info:
        parse_import(filename, data, **kwargs)
    return info.value


def itxt(keyword: bytes, text: bytes, *, compressed: bool) -> bytes:
    payload = zlib.compress(text) if compressed else text
    flag = b"\x01\x00" if compressed else b"\x00\x00"
    return chunk(b"iTXt", keyword + b"\x00" + flag + b"en\x00\x00" + payload)


def test_chara_text_chunk_written_by_pillow():
    result = parse_import("guard.png", pillow_png({"chara": b64_json(V2)}))
    valid(result.book)
    assert result.format == "ccv2"
    assert result.book["name"] == "v2 book"


def test_ccv3_is_preferred_over_chara():
    result = parse_import("guard.png", pillow_png({"chara": b64_json(V2), "ccv3": b64_json(V3)}))
    assert result.format == "ccv3"
    assert len(result.book["entries"]) == 2


def test_compressed_ztxt_chunk():
    result = parse_import("guard.png", pillow_png({"chara": b64_json(V2)}, compressed=True))
    assert result.book["name"] == "v2 book"


@pytest.mark.parametrize("compressed", [False, True])
def test_itxt_chunk(compressed):
    data = raw_png(itxt(b"ccv3", b64_json(V3).encode(), compressed=compressed))
    assert parse_import("guard.png", data).format == "ccv3"


def test_broken_ccv3_falls_back_to_chara_with_a_warning():
    data = raw_png(
        chunk(b"tEXt", b"ccv3\x00!!!not base64!!!"),
        chunk(b"tEXt", b"chara\x00" + b64_json(V2).encode()),
    )
    result = parse_import("guard.png", data)
    assert result.format == "ccv2"
    assert "card_chunk_fallback" in {w["code"] for w in result.report["warnings"]}


def test_png_without_card_chunk_is_not_a_card():
    assert failure(pillow_png({"Comment": "hello"})).code == "not_a_card"


def test_card_without_book_in_png_is_no_worldbook():
    data = pillow_png({"chara": b64_json(card("chara_card_v2", None))})
    assert failure(data).code == "no_worldbook"


@pytest.mark.parametrize("text", [b"%%%%", b64_json([1, 2]).encode(), b"e30", b"bm90IGpzb24="])
def test_broken_card_payload_is_invalid_card(text):
    data = raw_png(chunk(b"tEXt", b"chara\x00" + text))
    assert failure(data).code == "invalid_card"


def test_bad_signature():
    assert failure(b"GIF89a....").code == "invalid_png"


def test_truncated_png():
    data = pillow_png({"chara": b64_json(V2)})
    assert failure(data[: len(data) // 2]).code == "invalid_png"
    assert failure(data[:-12]).code == "invalid_png"  # no IEND


def test_bad_crc():
    good = chunk(b"tEXt", b"chara\x00" + b64_json(V2).encode())
    bad = good[:-4] + struct.pack(">I", (zlib.crc32(good[4:-4]) + 1) & 0xFFFFFFFF)
    assert failure(raw_png(bad)).code == "invalid_png"


def test_first_chunk_must_be_ihdr():
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"tEXt", b"chara\x00x") + chunk(b"IEND", b"")
    assert failure(data).code == "invalid_png"


def test_ztxt_bomb_fails_fast():
    # 64 MiB of zeros compresses to ~64 KiB: far past a 1 MiB limit once inflated.
    bomb = zlib.compress(b"\x00" * (64 * 1024 * 1024), 9)
    data = raw_png(chunk(b"zTXt", b"chara\x00\x00" + bomb))
    error = failure(data, max_bytes=1024 * 1024)
    assert error.code == "decompression_bomb"
    assert error.details == {"limit": 1024 * 1024}


def test_itxt_bomb_fails_under_the_default_limit():
    bomb = zlib.compress(b"A" * (17 * 1024 * 1024), 9)
    data = raw_png(chunk(b"iTXt", b"ccv3\x00\x01\x00\x00\x00" + bomb))
    assert failure(data).code == "decompression_bomb"


def test_many_chunks_share_one_budget():
    text = b"A" * 600_000
    chunks = [chunk(b"zTXt", b"chara\x00\x00" + zlib.compress(text))]
    chunks.append(chunk(b"zTXt", b"ccv3\x00\x00" + zlib.compress(text)))
    assert failure(raw_png(*chunks), max_bytes=1_000_000).code == "decompression_bomb"


def test_corrupt_compressed_stream_is_invalid_png():
    data = raw_png(chunk(b"zTXt", b"chara\x00\x00not zlib at all"))
    assert failure(data).code == "invalid_png"


def test_png_extension_with_json_body_is_invalid_png():
    assert failure(b'{"entries": {}}', filename="card.PNG").code == "invalid_png"


def test_png_is_sniffed_whatever_the_filename():
    result = parse_import("upload.bin", pillow_png({"chara": b64_json(V2)}))
    assert result.format == "ccv2"
    assert result.book["metadata"]["import"]["filename"] == "upload.bin"
