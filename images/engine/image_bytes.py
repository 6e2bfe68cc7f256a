"""What image bytes from a backend may be stored: the type sniffed from the bytes, the
dimensions decoded within bounds, the size under a cap.

A backend's own ``Content-Type`` is a claim; the first bytes say what the file is. Only PNG,
JPEG and WebP are stored. The header's dimensions are checked *before* any pixel is decoded
(a small file can declare a 100,000 x 100,000 picture), then the whole image is decoded so a
truncated or corrupt file is refused here rather than shown broken. Pillow is not Django:
this stays pure.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

from PIL import Image

from images.errors import Invalid

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
DEFAULT_MAX_SIDE = 8_192
DEFAULT_MAX_PIXELS = 40_000_000

# (magic test, format as Pillow names it, MIME type)
_SIGNATURES: tuple[tuple[str, str], ...] = (("PNG", "image/png"), ("JPEG", "image/jpeg"),
                                            ("WEBP", "image/webp"))  # fmt: skip
MIME_BY_FORMAT = dict(_SIGNATURES)
EXTENSION_BY_MIME = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}

NOT_AN_IMAGE = "not_an_image"
UNSUPPORTED = "unsupported_image_type"
TOO_LARGE = "image_too_large"
DIMENSIONS = "image_dimensions_too_large"
CORRUPT = "image_corrupt"
TYPE_MISMATCH = "content_type_mismatch"


@dataclass(frozen=True)
class ImageInfo:
    mime: str
    width: int
    height: int
    size: int

    @property
    def extension(self) -> str:
        return EXTENSION_BY_MIME[self.mime]


def sniff(data: bytes) -> str | None:
    """The MIME type the first bytes show (PNG, JPEG, WebP), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _refuse(code: str, message: str, **details: object) -> Invalid:
    return Invalid(code, message, {"field": "image", **details})


def _declared_problem(declared: str | None, sniffed: str) -> str | None:
    if not declared:
        return None
    kind = declared.split(";")[0].strip().lower()
    if kind in ("", "application/octet-stream", "binary/octet-stream"):
        return None
    if kind == "image/jpg":
        kind = "image/jpeg"
    if kind != sniffed:
        return f"the backend said {kind[:100]!r} but sent {sniffed}"
    return None


def check_image(
    data: object,
    *,
    declared_type: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_side: int = DEFAULT_MAX_SIDE,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> ImageInfo:
    """``data`` as a storable image, or a 422 whose code says what is wrong with it."""
    if not isinstance(data, bytes | bytearray) or not data:
        raise _refuse(NOT_AN_IMAGE, "the backend sent no image bytes")
    data = bytes(data)
    if len(data) > max_bytes:
        raise _refuse(TOO_LARGE, f"the image is over {max_bytes} bytes", limit=max_bytes)
    mime = sniff(data)
    if mime is None:
        raise _refuse(UNSUPPORTED, "the bytes are not a PNG, JPEG or WebP image")
    mismatch = _declared_problem(declared_type, mime)
    if mismatch:
        raise _refuse(TYPE_MISMATCH, mismatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                if width < 1 or height < 1:
                    raise _refuse(CORRUPT, "the image has no pixels")
                if max(width, height) > max_side or width * height > max_pixels:
                    raise _refuse(
                        DIMENSIONS,
                        f"the image is {width}x{height}; the limit is {max_side} a side "
                        f"and {max_pixels} pixels",
                        width=width,
                        height=height,
                    )
                if MIME_BY_FORMAT.get(image.format or "") != mime:
                    raise _refuse(CORRUPT, "the image's header does not match its type")
                image.load()
        except Invalid:
            raise
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError,
                Image.DecompressionBombWarning, MemoryError, EOFError) as exc:  # fmt: skip
            raise _refuse(CORRUPT, f"the image cannot be decoded: {type(exc).__name__}") from exc
    return ImageInfo(mime, width, height, len(data))
