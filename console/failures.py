"""The errors services, selectors and engines raise: a stable code, a message, JSON details.

Pure Python (no Django, no DRF), so engine modules can raise them too. Each capability
subclasses these in its own ``errors.py``; the *kind* of a class says what went wrong in
words the caller understands, and ``console.errors.exception_handler`` is the one place that
turns a kind into an HTTP status. Nothing below an ``api/`` package knows HTTP.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

Kind = Literal[
    "bad_request",
    "invalid",
    "not_found",
    "conflict",
    "locked",
    "too_large",
    "too_many",
    "unavailable",
    "bad_gateway",
]


class DomainError(Exception):
    """``DomainError(code, message, details)``; subclasses fix the kind (and may fix a code)."""

    kind: ClassVar[Kind] = "invalid"
    default_code: ClassVar[str] = "invalid"

    def __init__(
        self, code: str | None = None, message: str = "", details: dict[str, Any] | None = None
    ) -> None:
        self.code = code or self.default_code
        self.message = message or self.code
        self.details = details or {}
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class BadRequest(DomainError):
    """The request is malformed (a wrong type, a missing part): 400."""

    kind = "bad_request"
    default_code = "bad_request"


class FieldErrors(BadRequest):
    """Values of the body break field rules (400 ``validation_error``).

    ``details.errors`` lists ``{"loc": field, "msg": text}``: the shape the API serializers
    answer with. The same mistake (a key pasted into ``api_key_env``, a missing ``base_url``)
    is found by the serializer in one door and by the service in another, and a client must
    read one answer whichever layer noticed it.
    """

    default_code = "validation_error"

    def __init__(self, errors: dict[str, list[str]]) -> None:
        items = [{"loc": loc, "msg": msg} for loc, msgs in errors.items() for msg in msgs]
        message = "; ".join(f"{item['loc']}: {item['msg']}" for item in items[:5])
        super().__init__(message=message, details={"errors": items})

    @property
    def by_field(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for item in self.details["errors"]:
            out.setdefault(item["loc"], []).append(item["msg"])
        return out


class Invalid(DomainError):
    """Well formed but breaks a rule of the domain: 422."""

    kind = "invalid"
    default_code = "validation_error"


class NotFound(DomainError):
    """Missing, or another tenant's (the two are never told apart): 404."""

    kind = "not_found"
    default_code = "not_found"


class Conflict(DomainError):
    """A stale revision, a duplicate, a busy resource: 409. ``details`` carries the current
    state (``current_revision``) so the caller can retry against it."""

    kind = "conflict"
    default_code = "conflict"


class Locked(DomainError):
    """The caller may not do this now (a suspended player): 423."""

    kind = "locked"
    default_code = "locked"


class TooLarge(DomainError):
    """Over a documented size or count limit: 413."""

    kind = "too_large"
    default_code = "payload_too_large"


class TooMany(DomainError):
    """Over a quota or a rate limit: 429. ``details.retry_after`` (seconds) becomes the
    answer's ``Retry-After``."""

    kind = "too_many"
    default_code = "rate_limited"


class Unavailable(DomainError):
    """A dependency (model, index, broker) cannot serve right now; retry later: 503."""

    kind = "unavailable"
    default_code = "unavailable"


class BadGateway(DomainError):
    """A model answered, but not with anything usable (after the retries allowed): 502."""

    kind = "bad_gateway"
    default_code = "bad_gateway"


HTTP_STATUS: dict[str, int] = {
    "bad_request": 400,
    "invalid": 422,
    "not_found": 404,
    "conflict": 409,
    "locked": 423,
    "too_large": 413,
    "too_many": 429,
    "unavailable": 503,
    "bad_gateway": 502,
}
