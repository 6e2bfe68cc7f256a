"""Engine errors: a stable code, a message and JSON-safe details, for every engine failure
(selection here; publish checks in schema.py; imports in importers/errors.py)."""

from __future__ import annotations

from typing import Any

# Stable codes a caller can branch on.
REQUIRED_UNPLACEABLE = "required_unplaceable"
REQUIRED_OVER_BUDGET = "required_over_budget"
DEPENDENCY_BROKEN = "dependency_broken"
REQUIRED_CONFLICT = "required_conflict"
BOOK_MISMATCH = "book_mismatch"


class EngineError(Exception):
    """Base of the engine's errors; the API turns ``to_dict()`` into its error body."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class SelectionError(EngineError):
    """A required entry cannot be honoured, so the turn must fail rather than omit it."""
