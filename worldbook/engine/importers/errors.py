"""The one exception importers raise, with codes the API maps to HTTP statuses."""

from __future__ import annotations

from worldbook.engine.errors import EngineError

# Stable error codes. ``file_too_large`` is a 413 at the API; the others are 400/422.
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
    """A file that cannot become a book; nothing of it is kept.

    ``details`` is JSON-safe and small, so the API can return it as is in its error body.
    """
