"""Engine errors: a stable code, a message and JSON-safe details, for every engine failure
(selection here; publish checks in schema.py; imports in importers/errors.py).

They are :class:`worldbook.errors.WorldbookError` of a fixed kind, so a failure raised deep
in a pure function reaches the API (and the chat turn) as it is, with no translation step
that could drift. Like ``worldbook.errors`` and ``console.failures`` this is pure Python.
"""

from __future__ import annotations

from worldbook.errors import Invalid, WorldbookError

# Stable codes a caller can branch on.
REQUIRED_UNPLACEABLE = "required_unplaceable"
REQUIRED_OVER_BUDGET = "required_over_budget"
DEPENDENCY_BROKEN = "dependency_broken"
REQUIRED_CONFLICT = "required_conflict"
BOOK_MISMATCH = "book_mismatch"


class EngineError(WorldbookError):
    """Base of the engine's errors: ``EngineError(code, message, details)``."""


class SelectionError(Invalid, EngineError):
    """A required entry cannot be honoured, so the turn must fail rather than omit it (422)."""
