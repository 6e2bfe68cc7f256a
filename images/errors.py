"""What the images capability raises: a stable code, a message and JSON details.

Each class is an :class:`ImagesError` of one kind from ``console.failures`` (the kind alone
decides the HTTP status, in ``console.errors.exception_handler``), so a caller that is not
HTTP at all (the chat turn, a Celery task) catches ``ImagesError`` and reads its ``code``.
Pure Python: the engine raises these too.
"""

from __future__ import annotations

from typing import Any

from console import failures


class ImagesError(failures.DomainError):
    """Base of every images failure; a subclass fixes the kind (and maybe the code)."""


class BadRequest(ImagesError, failures.BadRequest):
    """A body that cannot even be read as what it claims to be (400)."""


class Invalid(ImagesError, failures.Invalid):
    """Well formed, but a field breaks a rule (422); ``details.field`` names it."""


class NotFound(ImagesError, failures.NotFound):
    """No such config, job, slot or file in this tenant (404; another tenant's is the same)."""


class Conflict(ImagesError, failures.Conflict):
    """The stored state does not allow this write now (409)."""


class Unavailable(ImagesError, failures.Unavailable):
    """The task queue or the image backend cannot serve now (503)."""


class BadGateway(ImagesError, failures.BadGateway):
    """The image backend answered with nothing usable (502)."""


def invalid(code: str, field: str, message: str, **details: Any) -> Invalid:
    """A 422 naming the field: ``details.field`` is always there."""
    return Invalid(code, message, {"field": field, **details})


def not_found(message: str = "not found") -> NotFound:
    return NotFound("not_found", message)
