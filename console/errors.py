"""The one error format: ``{"error": {"code", "message", "details"}}`` with stable codes."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation, TooManyFilesSent
from django.db import DataError
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response

from console.failures import HTTP_STATUS, DomainError

logger = logging.getLogger(__name__)


class ApiError(exceptions.APIException):
    """An error with a stable code and an explicit HTTP status, for the API layer only (a
    tenant mismatch, a bad idempotency key); services and engines raise the kinds of
    ``console.failures`` instead. Both go out through :func:`exception_handler`'s one branch."""

    def __init__(self, code: str, message: str, *, status_code: int = 400, details=None):
        super().__init__(detail=message, code=code)
        self.code = code
        self.message = message
        self.status_code = status_code
        self.details = details or {}


def conflict(code: str, message: str, **details) -> ApiError:
    return ApiError(code, message, status_code=status.HTTP_409_CONFLICT, details=details)


def not_found(message: str = "not found") -> ApiError:
    return ApiError("not_found", message, status_code=status.HTTP_404_NOT_FOUND)


def unprocessable(message: str, **details) -> ApiError:
    return ApiError("validation_error", message, status_code=422, details=details)


def error_body(code: str, message: str, details=None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _flatten(detail, prefix: str = "") -> list[dict]:
    if isinstance(detail, dict):
        out: list[dict] = []
        for key, value in detail.items():
            out.extend(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(detail, list):
        if all(not isinstance(d, dict | list) for d in detail):
            return [{"loc": prefix or "body", "msg": str(d)} for d in detail]
        out = []
        for i, value in enumerate(detail):
            out.extend(_flatten(value, f"{prefix}.{i}" if prefix else str(i)))
        return out
    return [{"loc": prefix or "body", "msg": str(detail)}]


# DRF's own exceptions: (class, status, stable code).
DRF_ERRORS = [
    (exceptions.NotAuthenticated, 401, "unauthenticated"),
    (exceptions.AuthenticationFailed, 401, "unauthenticated"),
    (exceptions.PermissionDenied, 403, "forbidden"),
    (exceptions.NotFound, 404, "not_found"),
    (exceptions.MethodNotAllowed, 405, "method_not_allowed"),
    (exceptions.NotAcceptable, 406, "not_acceptable"),
    (exceptions.UnsupportedMediaType, 415, "unsupported_media_type"),
    (exceptions.Throttled, 429, "rate_limited"),
    (exceptions.ParseError, 400, "invalid_json"),
]


def exception_handler(exc, context):
    if isinstance(exc, DomainError | ApiError):
        body = error_body(exc.code, exc.message, exc.details)
        if exc.details.get("current_revision") is not None:
            body["current_revision"] = exc.details["current_revision"]
        code_status = HTTP_STATUS[exc.kind] if isinstance(exc, DomainError) else exc.status_code
        wait = exc.details.get("retry_after") if code_status == 429 else None
        headers = {"Retry-After": str(int(wait))} if isinstance(wait, int) else None
        return Response(body, status=code_status, headers=headers)
    if isinstance(exc, Http404 | DjangoPermissionDenied):
        exc = exceptions.NotFound() if isinstance(exc, Http404) else exceptions.PermissionDenied()
    if isinstance(exc, RequestDataTooBig | TooManyFilesSent):
        return Response(error_body("payload_too_large", str(exc) or "request too large"), 413)
    if isinstance(exc, exceptions.ValidationError):
        errors = _flatten(exc.detail)
        message = "; ".join(f"{e['loc']}: {e['msg']}" for e in errors[:5])
        return Response(error_body("validation_error", message, {"errors": errors}), 400)
    for klass, code_status, code in DRF_ERRORS:
        if isinstance(exc, klass):
            headers = {}
            # DRF puts the challenge on the exception; a 401 must carry it (RFC 9110 §11.6.1).
            if getattr(exc, "auth_header", None):
                headers["WWW-Authenticate"] = exc.auth_header
            if isinstance(exc, exceptions.Throttled) and exc.wait:
                headers["Retry-After"] = str(int(exc.wait))
            return Response(error_body(code, str(exc.detail)), status=code_status, headers=headers)
    if isinstance(exc, exceptions.APIException):
        return Response(error_body("error", str(exc.detail)), status=exc.status_code)
    if isinstance(exc, DataError):
        # The database refused a value that validation let through (an out-of-range number,
        # a character the column cannot store): the client's input, so a 400, not a 500.
        logger.warning("database refused a value: %s", exc)
        return Response(error_body("invalid_value", "a value cannot be stored"), status=400)
    if isinstance(exc, SuspiciousOperation):
        return Response(error_body("bad_request", "bad request"), status=400)
    logger.exception("unhandled API error")
    return Response(error_body("internal_error", "internal error"), status=500)


def json_400(request, exception=None):
    """JSON for API paths, Django's page for the console: what Django refuses before any
    view (a ``Host`` that is not allowed, a malformed request) is still the one format."""
    if request.path.startswith(("/api/", "/v1/")):
        return JsonResponse(error_body("bad_request", "bad request"), status=400)
    from django.views.defaults import bad_request

    return _page(bad_request)(request, exception)


def json_404(request, exception=None):
    """JSON for API paths, Django's page for the console."""
    if request.path.startswith(("/api/", "/v1/")):
        return JsonResponse(error_body("not_found", "not found"), status=404)
    from django.views.defaults import page_not_found

    return _page(page_not_found)(request, exception)


def _page(view):
    """Django's error page view without its ``requires_csrf_token``. That decorator runs the
    CSRF check again, which reads a form body again: a body Django refused to read (a form
    declared in another charset than UTF-8) raised again inside the error page, and the 400
    became a 500. The CSRF middleware has run already, so the page's token is still there."""
    return getattr(view, "__wrapped__", view)
