"""The rules of an image config's fields, for every door (REST, console form, seed data).

Strict JSON types: a number is not text, ``true`` is not a number. The API key is never
stored: ``api_key_env`` names the environment variable that holds it, and a value that
looks like a key (a vendor prefix, a long random run) is refused rather than stored. Across
fields: an Automatic1111 server returns no moderation evidence, so it moderates by a call
or not at all; a slot's deadline must leave room for its backend call.
"""

from __future__ import annotations

from typing import Any

from console.secrets import is_key_name
from images.engine.request import (
    OUT_OF_RANGE,
    REQUIRED,
    WRONG_TYPE,
    Violation,
    integer_problem,
    text_problem,
    unknown_fields,
    url_problem,
)

PROVIDERS = ("openai_compatible", "automatic1111")
MODERATION_MODES = ("backend", "call", "none")
MAX_CLASSES = 20
MAX_CLASS_CHARS = 100
BAD_CHOICE = "invalid_choice"
LOOKS_LIKE_A_KEY = "api_key_not_allowed"
RULE = "invalid_combination"

# field -> (kind, argument): text (max bytes, required), url (required), int (low, high),
# choice (choices), classes.
FIELDS: dict[str, tuple[str, Any]] = {
    "name": ("text", (100, True)),
    "provider": ("choice", PROVIDERS),
    "base_url": ("url", True),
    "api_key_env": ("env", None),
    "model": ("text", (200, False)),
    "default_width": ("int", (64, 8_192)),
    "default_height": ("int", (64, 8_192)),
    "default_count": ("int", (1, 8)),
    "moderation_mode": ("choice", MODERATION_MODES),
    "moderation_base_url": ("url", False),
    "moderation_model": ("text", (200, False)),
    "allowed_classifications": ("classes", None),
    "timeout_seconds": ("int", (1, 600)),
    "slot_deadline_seconds": ("int", (10, 86_400)),
}
REQUIRED_ON_CREATE = ("name", "provider", "base_url")


def _env(field: str, value: object) -> Violation | None:
    if not isinstance(value, str):
        return Violation(field, WRONG_TYPE, f"{field} must be a string")
    value = value.strip()
    if value and not is_key_name(value):
        message = "Must be an environment variable NAME (e.g. IMAGE_API_KEY), not the key itself."
        return Violation(field, LOOKS_LIKE_A_KEY, message)
    return None


def _classes(field: str, value: object) -> Violation | None:
    if not isinstance(value, list) or not value:
        return Violation(field, WRONG_TYPE, f"{field} must be a non-empty list of class names")
    if len(value) > MAX_CLASSES:
        return Violation(field, OUT_OF_RANGE, f"{field} has more than {MAX_CLASSES} classes")
    for index, item in enumerate(value):
        problem = text_problem(f"{field}.{index}", item, max_bytes=MAX_CLASS_CHARS)
        if problem:
            return problem
    if len(set(value)) != len(value):
        return Violation(field, "duplicate", f"{field} lists a class twice")
    return None


def field_problem(field: str, value: object) -> Violation | None:
    kind, argument = FIELDS[field]
    if kind == "text":
        limit, required = argument
        if not required and value == "":
            return None
        return text_problem(field, value, max_bytes=limit)
    if kind == "url":
        if not argument and value == "":
            return None
        if value in (None, ""):
            return Violation(field, REQUIRED, f"{field} is required")
        if isinstance(value, str) and len(value.encode("utf-8", "surrogatepass")) > 500:
            return Violation(field, "too_long", f"{field} is longer than 500 bytes")
        return url_problem(field, value)
    if kind == "int":
        return integer_problem(field, value, *argument)
    if kind == "choice":
        if value not in argument or not isinstance(value, str):
            return Violation(field, BAD_CHOICE, f"{field} must be one of {', '.join(argument)}")
        return None
    if kind == "env":
        return _env(field, value)
    return _classes(field, value)


def config_problems(fields: object, *, creating: bool) -> list[Violation]:
    """Every rule the given fields break, field by field (no rule across fields)."""
    if not isinstance(fields, dict):
        return [Violation("body", "invalid_body", "the body must be a JSON object")]
    found = unknown_fields(fields, FIELDS)
    if creating:
        found += [
            Violation(name, REQUIRED, f"{name} is required")
            for name in REQUIRED_ON_CREATE
            if name not in fields
        ]
    for name, value in fields.items():
        if name in FIELDS:
            problem = field_problem(name, value)
            if problem:
                found.append(problem)
    return found


def combination_problems(config: dict[str, Any]) -> list[Violation]:
    """The rules across fields of a whole config (every field already valid)."""
    found = []
    if config.get("provider") == "automatic1111" and config.get("moderation_mode") == "backend":
        found.append(Violation("moderation_mode", RULE,
                               "an Automatic1111 server returns no moderation evidence: "
                               "choose a moderation call or no moderation"))  # fmt: skip
    timeout, deadline = config.get("timeout_seconds"), config.get("slot_deadline_seconds")
    if isinstance(timeout, int) and isinstance(deadline, int) and deadline <= timeout:
        message = "the slot deadline must be longer than the backend timeout"
        found.append(Violation("slot_deadline_seconds", RULE, message))
    return found
