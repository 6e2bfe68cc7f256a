"""Text-completion's coded errors (each kind decides its HTTP status once, in
``console.errors``)."""

from __future__ import annotations

from console import failures
from roleplay.errors import RoleplayError

from .engine import TemplateError


class TemplateRefused(RoleplayError, failures.Invalid):
    """A template file that cannot be used (422 ``instruct_template_invalid``); ``details``
    names the field at fault."""

    @classmethod
    def from_engine(cls, exc: TemplateError) -> TemplateRefused:
        return cls(exc.code, exc.message, dict(exc.details))
