"""The exceptions importers raise, with stable codes; the kind of each decides its status."""

from __future__ import annotations

from typing import ClassVar

from console.failures import Kind
from worldbook.engine.errors import EngineError

# Stable error codes.
FILE_TOO_LARGE = "file_too_large"
INVALID_JSON = "invalid_json"
UNSUPPORTED_FORMAT = "unsupported_format"
NOT_A_CARD = "not_a_card"
INVALID_PNG = "invalid_png"
DECOMPRESSION_BOMB = "decompression_bomb"
INVALID_CARD = "invalid_card"
TOO_MANY_ENTRIES = "too_many_entries"
NO_WORLDBOOK = "no_worldbook"
ENTRY_TOO_LARGE = "entry_too_large"


class ImportFailure(EngineError):
    """A file that cannot become a book; nothing of it is kept (400 unless a subclass says).

    ``details`` is JSON-safe and small, so the API can return it as is in its error body.
    """

    kind: ClassVar[Kind] = "bad_request"


class FileTooLarge(ImportFailure):
    """The file is over the byte limit (413)."""

    kind = "too_large"


class TooManyEntries(ImportFailure):
    """The file holds more entries than a book may have (422)."""

    kind = "invalid"
