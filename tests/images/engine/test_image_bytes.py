"""Image bytes from a backend: sniffed type, bounded dimensions, a size cap, a full decode."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from images.engine import image_bytes as ib
from images.errors import Invalid


def picture(fmt="PNG", size=(4, 3)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 80, 20)).save(out, format=fmt)
    return out.getvalue()


def code(data, **kwargs) -> str:
    with pytest.raises(Invalid) as caught:
        ib.check_image(data, **kwargs)
    assert caught.value.details["field"] == "image"
    return caught.value.code


@pytest.mark.parametrize(("fmt", "mime"), [("PNG", "image/png"), ("JPEG", "image/jpeg"),
                                           ("WEBP", "image/webp")])  # fmt: skip
def test_png_jpeg_and_webp_are_accepted(fmt, mime):
    info = ib.check_image(picture(fmt))
    assert (info.mime, info.width, info.height) == (mime, 4, 3)


def test_gif_html_and_nothing_are_refused():
    assert code(picture("GIF")) == ib.UNSUPPORTED
    assert code(b"<html>hi</html>") == ib.UNSUPPORTED
    assert code(b"") == ib.NOT_AN_IMAGE
    assert code(None) == ib.NOT_AN_IMAGE
    assert code("a string") == ib.NOT_AN_IMAGE


def test_the_byte_cap_plus_and_minus_one():
    data = picture()
    assert ib.check_image(data, max_bytes=len(data)).size == len(data)
    assert code(data, max_bytes=len(data) - 1) == ib.TOO_LARGE


def test_the_side_and_pixel_limits_plus_and_minus_one():
    data = picture(size=(10, 6))
    assert ib.check_image(data, max_side=10, max_pixels=60).width == 10
    assert code(data, max_side=9) == ib.DIMENSIONS
    assert code(data, max_pixels=59) == ib.DIMENSIONS


def test_a_huge_declared_size_is_refused_before_decoding():
    # A valid PNG header that declares 100,000 x 100,000 pixels, with almost no data.
    data = bytearray(picture(size=(1, 1)))
    data[16:24] = (100_000).to_bytes(4, "big") * 2
    assert code(bytes(data)) in (ib.DIMENSIONS, ib.CORRUPT)


def test_truncated_bytes_are_corrupt():
    data = picture(size=(64, 64))
    assert code(data[: len(data) // 2]) == ib.CORRUPT
    assert code(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40) == ib.CORRUPT


def test_the_declared_type_must_agree_with_the_bytes():
    data = picture("PNG")
    assert ib.check_image(data, declared_type="image/png; charset=binary").mime == "image/png"
    assert ib.check_image(data, declared_type="application/octet-stream").mime == "image/png"
    assert code(data, declared_type="image/jpeg") == ib.TYPE_MISMATCH
    assert code(data, declared_type="text/html") == ib.TYPE_MISMATCH
    assert ib.check_image(picture("JPEG"), declared_type="image/jpg").mime == "image/jpeg"
