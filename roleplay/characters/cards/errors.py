"""What reading, mapping and building a character card raise: a stable code, a message and
JSON-safe details, of a kind that decides the HTTP status once (``console.errors``).

The PNG and JSON walls are the worldbook importer's (``worldbook.engine.importers``): its
:class:`ImportFailure` codes (``invalid_png``, ``decompression_bomb``, ``invalid_json``,
``file_too_large``...) mean the same here, so :func:`from_import_failure` keeps them and
only changes the class, and a client reads one vocabulary for both imports.
"""

from __future__ import annotations

from typing import Any, ClassVar

from console.failures import Kind
from roleplay.errors import RoleplayError
from worldbook.engine.importers.errors import FileTooLarge, ImportFailure, TooManyEntries

# Codes of our own (the importer's are reused as they are).
INVALID_CARD = "invalid_card"
UNSUPPORTED_FORMAT = "unsupported_format"
INVALID_CHARX = "invalid_charx"
INVALID_IMAGE = "invalid_image"
IMAGE_TOO_LARGE = "image_too_large"
FILE_TOO_LARGE = "file_too_large"
DECOMPRESSION_BOMB = "decompression_bomb"
INVALID_EXPORT_FORMAT = "invalid_format"


class CardFailure(RoleplayError):
    """A file that cannot become a character, or a value a card cannot carry (400)."""

    kind: ClassVar[Kind] = "bad_request"
    default_code = INVALID_CARD


class CardInvalid(CardFailure):
    """Well-formed, but a value breaks a rule (a greeting too long, an image too big): 422."""

    kind = "invalid"


class CardTooLarge(CardFailure):
    """Over a byte limit (413)."""

    kind = "too_large"
    default_code = FILE_TOO_LARGE


def from_import_failure(exc: ImportFailure) -> CardFailure:
    """The worldbook importer's failure as ours, with its code, message and details."""
    klass: type[CardFailure] = CardFailure
    if isinstance(exc, FileTooLarge):
        klass = CardTooLarge
    elif isinstance(exc, TooManyEntries):
        klass = CardInvalid
    return klass(exc.code, exc.message, dict(exc.details))


def invalid(message: str, **details: Any) -> CardFailure:
    return CardFailure(INVALID_CARD, message, details)
