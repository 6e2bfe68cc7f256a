"""Regex scripts' coded errors (each kind decides its HTTP status once, in ``console.errors``)."""

from __future__ import annotations

from console import failures
from roleplay.errors import RoleplayError

from .engine import RegexScriptError


class RegexScriptRefused(RoleplayError, failures.Invalid):
    """A script that cannot run (422): ``regex_script_invalid`` (its shape) or
    ``regex_script_unsupported`` (a flag, or a pattern neither engine compiles);
    ``details`` names the field and the script."""

    @classmethod
    def from_engine(cls, exc: RegexScriptError) -> RegexScriptRefused:
        return cls(exc.code, exc.message, dict(exc.details))


class RegexScopeInvalid(RoleplayError, failures.FieldErrors):
    """The owner fields do not match the scope (400 ``validation_error``)."""
