"""Turning outside worldbook files (SillyTavern world info, CCv2/v3 cards) into native books.

Pure Python, no Django: the API layer calls :func:`parse_import`, shows the report for a
preview, and saves ``result.book`` as a new book revision.
"""

from worldbook.engine.importers.errors import ImportFailure
from worldbook.engine.importers.parse import (
    DEFAULT_MAX_BYTES,
    ImportResult,
    detect_format,
    parse_import,
)
from worldbook.engine.importers.runtime import runtime_requirements

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ImportFailure",
    "ImportResult",
    "detect_format",
    "parse_import",
    "runtime_requirements",
]
