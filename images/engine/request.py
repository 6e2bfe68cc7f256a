"""The standalone asset tool's request: every field's rule, as the seed states it.

``POST /api/v1/images/generations {prompt, reference_images?, count?, width?, height?,
image_config}``. The seed's bounds: a prompt that is not empty and at most 32,768 UTF-8
bytes; at most 9 ``http(s)`` reference URLs with no user name or password; ``count`` 1-8;
``width``/``height`` positive safe integers (at most 2^53-1); the config reference at most
256 UTF-8 bytes. Beyond the seed (every field has a limit): a reference URL is at most 4,096
bytes and not listed twice, and no field is text PostgreSQL cannot store.

:func:`parse_asset_request` reads any JSON value and either returns an
:class:`AssetRequest` or raises one 422 :class:`images.errors.Invalid` whose code is the
first violation's and whose ``details`` are ``{"field": <first>, "errors": [every one]}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from console.storable import unstorable
from images.errors import Invalid

MAX_PROMPT_BYTES = 32_768
MAX_REFERENCE_IMAGES = 9
MAX_REFERENCE_URL_BYTES = 4_096
MIN_COUNT, MAX_COUNT = 1, 8
MAX_SAFE_INTEGER = 2**53 - 1
MAX_CONFIG_REF_BYTES = 256
FIELDS = ("prompt", "reference_images", "count", "width", "height", "image_config")

# Stable codes, each naming one way a field is wrong.
REQUIRED = "field_required"
WRONG_TYPE = "invalid_type"
BAD_TEXT = "invalid_text"
TOO_LONG = "too_long"
OUT_OF_RANGE = "out_of_range"
TOO_MANY = "too_many"
BAD_URL = "invalid_url"
DUPLICATE = "duplicate"
UNKNOWN = "unknown_field"
NOT_AN_OBJECT = "invalid_body"


@dataclass(frozen=True)
class AssetRequest:
    """A request every rule accepted; ``None`` where the caller left the backend's default."""

    prompt: str
    image_config: str
    reference_images: tuple[str, ...] = ()
    count: int | None = None
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class Violation:
    field: str
    code: str
    message: str

    def as_dict(self) -> dict[str, str]:
        """``loc`` as in every validation error of the API (``console.errors``)."""
        return {"field": self.field, "loc": self.field, "code": self.code, "message": self.message}


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def text_problem(field: str, value: object, *, max_bytes: int) -> Violation | None:
    """Why ``value`` is not a usable non-empty text of at most ``max_bytes`` UTF-8 bytes."""
    if value is None:
        return Violation(field, REQUIRED, f"{field} is required")
    if not isinstance(value, str):
        return Violation(field, WRONG_TYPE, f"{field} must be a string")
    problem = unstorable(value)
    if problem:
        return Violation(field, BAD_TEXT, f"{field} {problem}")
    if not value.strip():
        return Violation(field, REQUIRED, f"{field} must not be empty")
    size = _utf8_size(value)
    if size > max_bytes:
        message = f"{field} is {size} UTF-8 bytes; the limit is {max_bytes}"
        return Violation(field, TOO_LONG, message)
    return None


def url_problem(field: str, value: object) -> Violation | None:
    """Why ``value`` is not an ``http(s)`` URL with a host and no user name or password."""
    if not isinstance(value, str):
        return Violation(field, WRONG_TYPE, f"{field} must be a URL string")
    problem = unstorable(value)
    if problem:
        return Violation(field, BAD_TEXT, f"{field} {problem}")
    if _utf8_size(value) > MAX_REFERENCE_URL_BYTES:
        return Violation(field, TOO_LONG, f"{field} is longer than {MAX_REFERENCE_URL_BYTES} bytes")
    if value != value.strip() or any(c.isspace() or ord(c) < 0x20 for c in value):
        return Violation(field, BAD_URL, f"{field} must not contain white space")
    try:
        parts = urlsplit(value)
        port = parts.port  # a port that is not a number raises here
    except ValueError:
        return Violation(field, BAD_URL, f"{field} is not a valid URL")
    del port
    if parts.scheme.lower() not in ("http", "https"):
        return Violation(field, BAD_URL, f"{field} must be an http or https URL")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return Violation(field, BAD_URL, f"{field} must not carry a user name or password")
    if not parts.hostname:
        return Violation(field, BAD_URL, f"{field} has no host")
    return None


def integer_problem(field: str, value: object, low: int, high: int) -> Violation | None:
    """Why ``value`` is not a JSON integer in ``[low, high]`` (a boolean or float is not)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return Violation(field, WRONG_TYPE, f"{field} must be an integer")
    if not low <= value <= high:
        return Violation(field, OUT_OF_RANGE, f"{field} must be between {low} and {high}")
    return None


def _references(value: object) -> tuple[list[Violation], tuple[str, ...]]:
    field = "reference_images"
    if value is None:
        return [], ()
    if not isinstance(value, list):
        return [Violation(field, WRONG_TYPE, f"{field} must be a list of URLs")], ()
    if len(value) > MAX_REFERENCE_IMAGES:
        message = f"{field} has {len(value)} URLs; at most {MAX_REFERENCE_IMAGES} are allowed"
        return [Violation(field, TOO_MANY, message)], ()
    found: list[Violation] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        where = f"{field}.{index}"
        problem = url_problem(where, item)
        if problem:
            found.append(problem)
            continue
        assert isinstance(item, str)
        if item in seen:
            found.append(Violation(where, DUPLICATE, f"{where} repeats an earlier URL"))
        seen.add(item)
    return found, tuple(value) if not found else ()


def violations(body: object) -> list[Violation]:
    """Every rule ``body`` breaks (empty: it is a valid request)."""
    if not isinstance(body, dict):
        return [Violation("body", NOT_AN_OBJECT, "the body must be a JSON object")]
    found = unknown_fields(body, FIELDS)
    for problem in (
        text_problem("prompt", body.get("prompt"), max_bytes=MAX_PROMPT_BYTES),
        text_problem("image_config", body.get("image_config"), max_bytes=MAX_CONFIG_REF_BYTES),
    ):
        if problem:
            found.append(problem)
    found.extend(_references(body.get("reference_images"))[0])
    if body.get("count") is not None:
        found.extend(_some(integer_problem("count", body["count"], MIN_COUNT, MAX_COUNT)))
    for side in ("width", "height"):
        if body.get(side) is not None:
            found.extend(_some(integer_problem(side, body[side], 1, MAX_SAFE_INTEGER)))
    return found


def unknown_fields(body: dict[Any, Any], known: Iterable[str]) -> list[Violation]:
    """A violation per key of ``body`` not in ``known``, named so any JSON can carry it (a
    key that is not valid Unicode is shown escaped)."""
    names = set(known)
    found = []
    for key in body:
        if key not in names:
            text = str(key)
            shown = text if not unstorable(text) else ascii(text)
            found.append(Violation(shown[:100], UNKNOWN, f"unknown field {shown[:100]!r}"))
    return found


def _some(problem: Violation | None) -> list[Violation]:
    return [problem] if problem else []


def refusal(found: list[Violation]) -> Invalid:
    """The one 422 for ``found`` (not empty): the first violation's code and field, and all."""
    first = found[0]
    details: dict[str, Any] = {"field": first.field, "errors": [v.as_dict() for v in found]}
    return Invalid(first.code, first.message, details)


def parse_asset_request(body: object) -> AssetRequest:
    """``body`` as a valid :class:`AssetRequest`, or the 422 naming every broken field."""
    found = violations(body)
    if found:
        raise refusal(found)
    assert isinstance(body, dict)
    return AssetRequest(
        prompt=body["prompt"],
        image_config=body["image_config"],
        reference_images=_references(body.get("reference_images"))[1],
        count=body.get("count"),
        width=body.get("width"),
        height=body.get("height"),
    )
