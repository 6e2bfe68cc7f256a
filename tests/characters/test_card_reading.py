"""Reading card files (pure): each container and spec, and every malformed file refused
with a stable code before anything could be written."""

from __future__ import annotations

import zipfile

import pytest

from roleplay.characters.cards.charx import MAX_MEMBERS
from roleplay.characters.cards.errors import CardFailure
from roleplay.characters.cards.read import read_card_file
from tests.characters.cardfiles import (
    as_json,
    b64,
    bomb_png,
    card_png,
    charx,
    chunk,
    flip_crc,
    image_bytes,
    png_card,
    raw_png,
    v2_card,
    v3_card,
    zip_bomb,
)


def failure(data: bytes, filename: str = "card") -> CardFailure:
    with pytest.raises(CardFailure) as caught:
        read_card_file(filename, data)
    return caught.value


@pytest.mark.parametrize(
    ("make", "fmt"),
    [
        (lambda: as_json(v2_card()), "ccv2_json"),
        (lambda: as_json(v3_card()), "ccv3_json"),
        (lambda: png_card(v2_card()), "ccv2_png"),
        (lambda: png_card(v3_card()), "ccv3_png"),
        (lambda: charx(v3_card(), icon=image_bytes()), "ccv3_charx"),
        (lambda: as_json({"name": "Old", "first_mes": "Hi."}), "ccv1_json"),
    ],
)
def test_each_format_is_read(make, fmt):
    data = make()
    card = read_card_file("upload", data)
    assert card.format == fmt
    assert len(card.sha256) == 64
    if fmt.endswith("_png"):
        assert card.image == data  # the PNG itself becomes the avatar
    if fmt.endswith("_charx"):
        assert card.image == image_bytes()


def test_png_prefers_ccv3_over_chara():
    data = card_png({"chara": b64(v2_card("Old")), "ccv3": b64(v3_card("New"))})
    card = read_card_file("x.png", data)
    assert (card.spec, card.card["data"]["name"]) == ("ccv3", "New")


def test_compressed_text_chunks_are_read():
    card = read_card_file("x.png", card_png({"chara": b64(v2_card())}, compressed=True))
    assert card.card["data"]["name"] == "Mira"


def test_charx_without_icon_has_no_image():
    card = read_card_file("x.charx", charx(v3_card()))
    assert card.image is None and card.format == "ccv3_charx"


def test_charx_icon_missing_from_the_archive_is_a_warning():
    data = charx(v3_card(), icon=image_bytes())
    # Rewrite the archive without the icon, keeping the card that points at it.
    with zipfile.ZipFile(__import__("io").BytesIO(data)) as archive:
        card_json = archive.read("card.json")
    stripped = charx(None, members={"card.json": card_json})
    card = read_card_file("x.charx", stripped)
    assert card.image is None and card.warnings


@pytest.mark.parametrize(
    ("data", "filename", "code"),
    [
        (b"{not json", "c.json", "invalid_json"),
        (b"\xff\xfe\x00garbage", "c.json", "invalid_json"),
        (b'{"a": NaN}', "c.json", "invalid_json"),
        (b"[1, 2]", "c.json", "invalid_card"),
        (as_json({"spec": "chara_card_v9", "data": {}}), "c.json", "unsupported_format"),
        (as_json({"hello": "world"}), "c.json", "unsupported_format"),
        (as_json({"spec": "chara_card_v2", "data": "text"}), "c.json", "invalid_card"),
        (b"GIF89a not a png", "c.png", "invalid_png"),
        (b"plain text", "c.charx", "invalid_charx"),
        (image_bytes(), "c.png", "not_a_card"),
        (raw_png(chunk(b"tEXt", b"chara\x00!!!not base64!!!")), "c.png", "invalid_card"),
        (raw_png(chunk(b"tEXt", b"chara\x00" + b"aGVsbG8=")), "c.png", "invalid_card"),
    ],
    ids=[
        "json-syntax",
        "json-encoding",
        "json-nan",
        "json-not-object",
        "unknown-spec",
        "no-spec",
        "data-not-object",
        "png-bad-signature",
        "charx-not-zip",
        "png-without-card",
        "png-bad-base64",
        "png-not-json",
    ],
)
def test_malformed_files_have_stable_codes(data, filename, code):
    error = failure(data, filename)
    assert error.code == code, error
    assert error.kind in ("bad_request", "invalid")


def test_truncated_png_is_invalid_png():
    data = png_card(v2_card())
    for cut in (len(data) - 5, len(data) // 2, 20):
        assert failure(data[:cut], "c.png").code == "invalid_png"


def test_wrong_crc_is_invalid_png():
    assert failure(flip_crc(png_card(v2_card()), b"tEXt"), "c.png").code == "invalid_png"
    assert failure(flip_crc(png_card(v2_card()), b"IDAT"), "c.png").code == "invalid_png"


def test_png_text_bomb_is_refused():
    assert failure(bomb_png(20 * 1024 * 1024), "c.png").code == "decompression_bomb"


def test_zip_bomb_is_refused_after_the_limit():
    with pytest.raises(CardFailure) as caught:
        read_card_file("c.charx", zip_bomb(64 * 1024 * 1024), max_bytes=16 * 1024 * 1024)
    assert caught.value.code == "decompression_bomb"


def test_charx_without_card_json():
    assert failure(charx(None, members={"x.txt": b"x"}), "c.charx").code == "invalid_charx"


def test_charx_with_too_many_members():
    members = {f"assets/other/{i}.txt": b"" for i in range(MAX_MEMBERS + 1)}
    error = failure(charx(v3_card(), members=members), "c.charx")
    assert error.code == "invalid_charx" and error.details["limit"] == MAX_MEMBERS


def test_charx_with_a_corrupt_member():
    data = bytearray(charx(v3_card(), compression=zipfile.ZIP_STORED))
    at = data.index(b'"name"')
    data[at + 1] ^= 0x20  # bytes changed, CRC not
    assert failure(bytes(data), "c.charx").code == "invalid_charx"


def test_truncated_charx():
    data = charx(v3_card(), icon=image_bytes())
    assert failure(data[: len(data) // 2], "c.charx").code == "invalid_charx"


def test_charx_card_json_not_json():
    error = failure(charx(None, members={"card.json": b"{oops"}), "c.charx")
    assert error.code == "invalid_card"


def test_file_over_the_limit_is_too_large():
    with pytest.raises(CardFailure) as caught:
        read_card_file("c.json", b" " * 101, max_bytes=100)
    assert caught.value.code == "file_too_large" and caught.value.kind == "too_large"
