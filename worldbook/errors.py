"""What worldbook services, selectors, retrieval, indexing and its engine raise.

Each class is a :class:`WorldbookError` of one kind from ``console.failures`` (the kind alone
decides the HTTP status, in ``console.errors.exception_handler``), so a caller that is not
HTTP at all, such as the chat turn, catches ``WorldbookError`` and reads its stable ``code``.
Pure Python: the engine's own errors (``worldbook.engine.errors``) derive from it too.

Codes are the seed's where it names one (``revision_conflict``, ``index_busy``,
``idempotency_conflict`` stays with ``console.idempotency``), else ``validation_error`` for
a body that breaks a rule.
"""

from __future__ import annotations

from typing import Any

from console import failures


class WorldbookError(failures.DomainError):
    """Base of every worldbook failure; a subclass fixes the kind (and maybe the code)."""


class BadRequest(WorldbookError, failures.BadRequest):
    """A file or body that cannot even be read as what it claims to be (400)."""


class Invalid(WorldbookError, failures.Invalid):
    """Well formed, but it breaks a rule of books, bindings or selection (422)."""


class NotFound(WorldbookError, failures.NotFound):
    """No such book or revision in this tenant (404; another tenant's is the same)."""


class Conflict(WorldbookError, failures.Conflict):
    """The stored state does not allow this write now (409)."""


class TooLarge(WorldbookError, failures.TooLarge):
    """Over a size limit of the seed: 16 MiB a file, 48 MiB a batch (413)."""


class Unavailable(WorldbookError, failures.Unavailable):
    """A dependency (the task queue, an embedder) cannot serve now; retry later (503)."""


class RevisionConflict(Conflict):
    """The head moved since the caller read it; ``details.current_revision`` is the head."""

    default_code = "revision_conflict"

    def __init__(self, current: int | None, expected: int, message: str = "") -> None:
        super().__init__(
            message=message
            or f"the book is at revision {current}, not {expected}; reload and retry",
            details={"current_revision": current, "expected_revision": expected},
        )


class IndexBusy(Conflict):
    """A build of the same revision and embedding version is already running."""

    default_code = "index_busy"


def invalid(message: str, **details: Any) -> Invalid:
    """The common 422: ``validation_error`` with a message and optional details."""
    return Invalid("validation_error", message, details)


def not_found(message: str) -> NotFound:
    return NotFound("not_found", message)
