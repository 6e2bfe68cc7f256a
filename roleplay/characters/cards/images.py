"""Avatars of characters and personas: an uploaded image in, a bounded PNG out.

Images come from people and from card files, so nothing in them is trusted:

* only PNG, JPEG and WebP are opened (Pillow is told the formats, so no other decoder runs);
* the byte size is checked before Pillow sees the file, the pixel count right after it has
  read the header and before any pixel is decoded (a small file that claims a 100,000 ×
  100,000 image is refused without allocating it), and Pillow's own decompression-bomb
  check is made an error rather than a warning;
* a truncated or corrupt image fails while it is decoded (CRCs and all), as
  ``invalid_image``;
* the image is stored re-encoded as PNG, at most :data:`MAX_SIDE` pixels on its longer
  side: no metadata, text chunk or second frame of the upload survives.

A PNG card's text chunks are removed before decoding (:func:`strip_png_text`): they hold
the card, often megabytes of it, which Pillow has no need to parse.
"""

from __future__ import annotations

import hashlib
import io
import warnings
import zlib

from PIL import Image, UnidentifiedImageError

from roleplay.characters.cards.errors import (
    IMAGE_TOO_LARGE,
    INVALID_IMAGE,
    CardInvalid,
    CardTooLarge,
)
from worldbook.engine.importers.errors import ImportFailure
from worldbook.engine.importers.png import PNG_SIGNATURE, iter_chunks

MAX_AVATAR_BYTES = 8 * 1024 * 1024
MAX_PIXELS = 40_000_000  # below Pillow's own 89M-pixel bomb threshold
MAX_SIDE = 1024
FORMATS = ("PNG", "JPEG", "WEBP")
CONTENT_TYPE = "image/png"
DEFAULT_SIZE = (400, 600)  # the 2:3 portrait of most card images
_TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt")


def normalize_avatar(data: bytes, *, max_bytes: int = MAX_AVATAR_BYTES) -> bytes:
    """``data`` (PNG, JPEG or WebP) as a PNG of at most ``MAX_SIDE`` pixels a side."""
    if len(data) > max_bytes:
        raise CardTooLarge(
            "avatar_too_large",
            f"the image has {len(data)} bytes; the limit is {max_bytes}",
            {"size": len(data), "limit": max_bytes},
        )
    if data.startswith(PNG_SIGNATURE):
        try:
            data = strip_png_text(data)
        except ImportFailure as exc:
            raise CardInvalid(
                INVALID_IMAGE, f"the image is not a valid PNG: {exc.message}"
            ) from exc
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data), formats=FORMATS) as image:
                _check_pixels(image.width, image.height)
                image.load()
                converted = _converted(image)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise _too_many_pixels() from exc
        except UnidentifiedImageError as exc:
            raise CardInvalid(
                INVALID_IMAGE, "the file is not a PNG, JPEG or WebP image", {}
            ) from exc
        except (OSError, ValueError, SyntaxError, EOFError) as exc:
            raise CardInvalid(INVALID_IMAGE, f"the image cannot be decoded ({exc})", {}) from exc
    converted.thumbnail((MAX_SIDE, MAX_SIDE))
    return encode_png(converted)


def _check_pixels(width: int, height: int) -> None:
    if width * height > MAX_PIXELS:
        raise _too_many_pixels(width, height)


def _too_many_pixels(width: int | None = None, height: int | None = None) -> CardInvalid:
    details: dict[str, int | None] = {"limit_pixels": MAX_PIXELS}
    if width is not None:
        details.update(width=width, height=height)
    return CardInvalid(IMAGE_TOO_LARGE, f"the image has more than {MAX_PIXELS} pixels", details)


def _converted(image: Image.Image) -> Image.Image:
    """The first frame in RGB or RGBA (palette and grey images keep their transparency)."""
    image.seek(0)
    has_alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
    return image.convert("RGBA" if has_alpha else "RGB")


def encode_png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def strip_png_text(data: bytes) -> bytes:
    """The PNG without its text chunks (after the importer's structure and CRC checks)."""
    parts = [PNG_SIGNATURE]
    for kind, body in iter_chunks(data):
        if kind in _TEXT_CHUNKS:
            continue
        parts.append(chunk_bytes(kind, body))
    return b"".join(parts)


def chunk_bytes(kind: bytes, body: bytes) -> bytes:
    """One PNG chunk: length, type, body, CRC of type and body."""
    crc = zlib.crc32(kind + body)
    return len(body).to_bytes(4, "big") + kind + body + crc.to_bytes(4, "big")


def default_avatar(seed: str) -> bytes:
    """A plain portrait-sized PNG, its colour taken from ``seed`` (a name), for cards
    exported without an avatar: every PNG card needs an image."""
    digest = hashlib.sha256(seed.encode("utf-8", "replace")).digest()
    colour = tuple(64 + byte % 128 for byte in digest[:3])
    return encode_png(Image.new("RGB", DEFAULT_SIZE, colour))


def etag(data: bytes) -> str:
    """A strong validator of an image's bytes, for conditional requests."""
    return '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
