"""Avatars (pure): PNG, JPEG and WebP in, a bounded PNG out; bad images, pixel bombs and
oversized files refused with stable codes."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from roleplay.characters.cards.errors import CardFailure
from roleplay.characters.cards.images import (
    MAX_AVATAR_BYTES,
    MAX_SIDE,
    default_avatar,
    etag,
    normalize_avatar,
)
from tests.characters.cardfiles import flip_crc, image_bytes, pixel_bomb_png, png_card, v2_card


def opened(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_each_format_becomes_a_png(fmt):
    out = opened(normalize_avatar(image_bytes(fmt, (20, 30))))
    assert out.format == "PNG" and out.size == (20, 30)


def test_large_images_are_scaled_down_keeping_their_shape():
    out = opened(normalize_avatar(image_bytes("PNG", (2048, 1024))))
    assert out.size == (MAX_SIDE, MAX_SIDE // 2)


def test_transparency_is_kept():
    source = io.BytesIO()
    Image.new("RGBA", (4, 4), (1, 2, 3, 0)).save(source, format="PNG")
    assert opened(normalize_avatar(source.getvalue())).mode == "RGBA"


def test_a_card_png_loses_its_text_chunks():
    out = normalize_avatar(png_card(v2_card()))
    assert b"tEXt" not in out and b"chara" not in out


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"definitely not an image", "invalid_image"),
        (image_bytes("GIF"), "invalid_image"),
        (image_bytes("PNG")[:60], "invalid_image"),
        (flip_crc(image_bytes("PNG"), b"IDAT"), "invalid_image"),
        (image_bytes("JPEG")[:200], "invalid_image"),
        (pixel_bomb_png(), "image_too_large"),
    ],
    ids=["garbage", "gif", "truncated-png", "bad-crc", "truncated-jpeg", "pixel-bomb"],
)
def test_bad_images_are_refused(data, code):
    with pytest.raises(CardFailure) as caught:
        normalize_avatar(data)
    assert caught.value.code == code and caught.value.kind == "invalid"


def test_an_image_over_the_byte_limit_is_too_large():
    with pytest.raises(CardFailure) as caught:
        normalize_avatar(b"\x00" * (MAX_AVATAR_BYTES + 1))
    assert caught.value.code == "avatar_too_large" and caught.value.kind == "too_large"


def test_the_default_avatar_is_a_plain_png_that_depends_on_the_name():
    first, again, other = default_avatar("Mira"), default_avatar("Mira"), default_avatar("Ada")
    assert opened(first).format == "PNG" and first == again and first != other
    assert etag(first) == etag(again) != etag(other)
