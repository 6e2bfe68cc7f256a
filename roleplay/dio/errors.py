"""DIO's coded errors (each kind decides its HTTP status once, in ``console.errors``)."""

from __future__ import annotations

from console import failures
from roleplay.errors import RoleplayError


class DioDuplicate(RoleplayError, failures.Conflict):
    """A submission with this request id exists already (409 ``dio_duplicate``)."""

    default_code = "dio_duplicate"

    def __init__(self, request_id: str) -> None:
        super().__init__(
            message=f"request {request_id!r} was submitted already",
            details={"requestId": request_id},
        )


class VersionConflict(RoleplayError, failures.Conflict):
    """The prompt's versions moved past the one the writer read (409 ``version_conflict``;
    ``details.currentVersion``)."""

    default_code = "version_conflict"

    def __init__(self, current: int, expected: int) -> None:
        super().__init__(
            message=f"the DIO prompt is at version {current}, not {expected}",
            details={"currentVersion": current, "expectedVersion": expected},
        )


class DioNotFound(RoleplayError, failures.NotFound):
    """No such conversation, task or version for this tenant (404)."""


class DioInvalid(RoleplayError, failures.Invalid):
    """Well formed but not possible (422), e.g. reverting to an ``off`` version."""


class DioBadRequest(RoleplayError, failures.FieldErrors):
    """A protocol body breaks a field rule (400 ``validation_error``, the field named)."""
