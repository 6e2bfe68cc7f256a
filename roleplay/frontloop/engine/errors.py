"""The error a bad ``preActorDirector`` raises: one class, a stable code, a field path.

A scenario's director config is written by operators and by imports, so every way it can be
wrong (a wrong JSON type, a blank or endless name, a duplicated skill, an unknown
``afterActorTools`` value, text PostgreSQL cannot store) is a 422 naming the field, never a
500 (house rule "never a 500 on bad input"). Pure: derives from ``console.failures``.
"""

from __future__ import annotations

from console import failures

# The stable codes of DirectorInvalid, one per way a field can be wrong.
WRONG_TYPE = "wrong_type"  # not the JSON type the field needs
REQUIRED = "required"  # a required field is absent
UNKNOWN_FIELD = "unknown_field"  # a field the shape does not have
EMPTY = "empty"  # a blank string where text is needed
TOO_LONG = "too_long"  # a string past its limit
TOO_MANY = "too_many"  # a list past its limit
INVALID_TEXT = "invalid_text"  # a NUL or a lone surrogate (console.storable)
UNKNOWN_TOOL = "unknown_tool"  # an afterActorTools value the loop does not have
DUPLICATE = "duplicate"  # a skill name or an afterActorTools value given twice

CODES = (
    WRONG_TYPE,
    REQUIRED,
    UNKNOWN_FIELD,
    EMPTY,
    TOO_LONG,
    TOO_MANY,
    INVALID_TEXT,
    UNKNOWN_TOOL,
    DUPLICATE,
)


class DirectorInvalid(failures.Invalid):
    """``preActorDirector`` breaks a rule: ``code`` (one of :data:`CODES`), ``field`` (a
    dotted path such as ``preActorDirector.skills.2.name``), a message; 422 over HTTP."""

    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(code, f"{field}: {message}", {"field": field})
        self.field = field
