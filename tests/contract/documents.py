"""Helpers of the contract tests: path shapes, validators of document components, and one
sample of every error the exception handler can produce (read from its own tables)."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

from jsonschema import Draft202012Validator


def shape(path: str) -> str:
    """``/api/v1/characters/{id}/`` and ``/api/v1/characters/{pk}`` both become
    ``/api/v1/characters/{}``: the document and the resolver name parameters differently."""
    return re.sub(r"\{[^}]+\}", "{}", path).rstrip("/")


def view_model(path: str):
    """The model a DRF route's ``{id}`` names (``view.model``), or None."""
    from django.urls import resolve

    match = resolve(path.format_map(_Placeholder()))
    return getattr(getattr(match.func, "cls", None), "model", None)


class _Placeholder(dict):
    def __missing__(self, key: str) -> str:
        return "1"


def concrete_path(path: str, world) -> str:
    """A document path with every parameter set to the world's object."""
    model = view_model(path)
    names = re.findall(r"\{(\w+)\}", path)
    return path.format(**{name: world.value(name, model) for name in names})


def component_validator(document: dict, name: str) -> Draft202012Validator:
    """A validator of ``#/components/schemas/<name>`` that resolves the document's refs."""
    root = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    return Draft202012Validator(root)


@dataclass(frozen=True)
class ErrorSample:
    label: str
    exception: BaseException

    def respond(self):
        from console.errors import exception_handler

        return exception_handler(self.exception, {})


def _instance(klass):
    """``klass`` made with a placeholder for each required argument (a method, a media type)."""
    required = [
        p
        for p in list(inspect.signature(klass).parameters.values())
        if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    return klass(*["x"] * len(required))


def error_samples() -> list[ErrorSample]:
    """An exception of every kind the handler maps: domain kinds, DRF's table, the rest."""
    from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
    from django.db import DataError
    from django.http import Http404
    from rest_framework import exceptions

    from console.errors import DRF_ERRORS, ApiError, conflict
    from console.failures import HTTP_STATUS, DomainError

    samples = [
        ErrorSample(f"domain-{kind}", type(f"Sample{kind}", (DomainError,), {"kind": kind})())
        for kind in HTTP_STATUS
    ]
    samples += [
        ErrorSample(f"drf-{klass.__name__}", _instance(klass)) for klass, _, _ in DRF_ERRORS
    ]
    stale = DomainError("revision_conflict", "stale", {"current_revision": 3})
    nested = exceptions.ValidationError({"a": ["bad"], "b": {"c": ["worse"]}})
    return samples + [
        ErrorSample("domain-revision", stale),
        ErrorSample("api-error", ApiError("invalid_format", "format must be native")),
        ErrorSample("api-conflict", conflict("revision_conflict", "stale", current_revision=2)),
        ErrorSample("validation", nested),
        ErrorSample("not-found", Http404()),
        ErrorSample("permission", PermissionDenied()),
        ErrorSample("too-big", RequestDataTooBig("too big")),
        ErrorSample("data-error", DataError("value too long")),
        ErrorSample("suspicious", SuspiciousOperation("odd")),
        ErrorSample("api-exception", exceptions.APIException("odd")),
        ErrorSample("unhandled", RuntimeError("boom")),
    ]
