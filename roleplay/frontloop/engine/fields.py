"""Reading one JSON field of ``preActorDirector`` with the house's limits, by field path.

The config arrives as parsed JSON from the API, the console's JSON box and imports, so any
position may hold any JSON type (a number for a name, an object for a list, ``true`` for a
string). Each reader checks the type first, then the size before any other work (a
300,000-character name is refused by its length, not scanned), then what PostgreSQL can
store, and raises :class:`~.errors.DirectorInvalid` naming the field (seed 002 line 484:
``preActorDirector`` fields).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection
from typing import Any

from console.storable import unstorable

from . import errors
from .errors import DirectorInvalid
from .text import clip


def read_object(value: object, field: str, allowed: Collection[str]) -> dict[str, Any]:
    """``value`` as a JSON object whose keys are all in ``allowed``."""
    if not isinstance(value, dict):
        raise DirectorInvalid(errors.WRONG_TYPE, field, f"must be an object, not {_kind(value)}")
    for key in value:
        if key not in allowed:
            shown = key if isinstance(key, str) else repr(key)
            raise DirectorInvalid(
                errors.UNKNOWN_FIELD,
                field,
                f"has no field {_shown(shown)} (allowed: " + ", ".join(sorted(allowed)) + ")",
            )
    return value


def read_list(value: object, field: str, limit: int) -> list[Any]:
    """``value`` as a JSON array of at most ``limit`` items."""
    if not isinstance(value, list):
        raise DirectorInvalid(errors.WRONG_TYPE, field, f"must be a list, not {_kind(value)}")
    if len(value) > limit:
        raise DirectorInvalid(errors.TOO_MANY, field, f"has {len(value)} items; at most {limit}")
    return value


def read_text(value: object, field: str, limit: int, *, line: bool = False) -> str:
    """``value`` as a string, stripped, non-blank, at most ``limit`` characters, storable;
    ``line``: a one-line name (no control characters: it is shown in the controller's
    prompt, where a newline would start a line of its own)."""
    if not isinstance(value, str):
        raise DirectorInvalid(errors.WRONG_TYPE, field, f"must be a string, not {_kind(value)}")
    if len(value) > limit * 2 or len(value.strip()) > limit:
        raise DirectorInvalid(errors.TOO_LONG, field, f"is longer than {limit} characters")
    problem = unstorable(value)
    if problem:
        raise DirectorInvalid(errors.INVALID_TEXT, field, problem)
    text = value.strip()
    if not text:
        raise DirectorInvalid(errors.EMPTY, field, "must not be blank")
    if line and any(unicodedata.category(ch) == "Cc" for ch in text):
        raise DirectorInvalid(errors.INVALID_TEXT, field, "contains a control character")
    return text


def read_optional_text(value: object, field: str, limit: int) -> str | None:
    """Like :func:`read_text`, but ``null`` or a blank string is ``None`` (not set)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return read_text(value, field, limit)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _shown(name: str) -> str:
    return repr(clip(name, 60))
