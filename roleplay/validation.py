"""The field rules of a model config: validators that keep credentials out of the database.

The field validators sit on the model fields, so the API serializer and the console form run
them on input, and the services run them again (``full_clean``) for every other door. The
rules across fields (``services.model_configs.model_config_problems``) are checked by the
services only, for every door at once; they live there, beside the models they read, so this
module (which the models import) imports no models.

A model config names the environment variable that holds its key (``api_key_env``); the key
itself must never reach the database. People paste keys into the wrong field, so a value that
looks like a key (a vendor prefix, or a long random-looking run of letters and digits) is
rejected rather than stored, and ``extra`` may not carry credential-like keys either.
"""

from __future__ import annotations

import json
import re

from django.core.exceptions import ValidationError

from console.secrets import is_key_name

SECRET_KEY_NAME = re.compile(
    r"api[_-]?key|secret|password|authorization|bearer|access[_-]?token|auth[_-]?token", re.I
)
EXTRA_MAX_CHARS = 16_000


def validate_api_key_env(value: str) -> None:
    value = (value or "").strip()
    if not value:
        return
    if not is_key_name(value):
        raise ValidationError(
            "Must be an environment variable NAME (e.g. OPENAI_API_KEY), not the key itself."
        )


def _walk(value) -> tuple[list[str], list[str]]:
    """Every dict key and every string value at any depth (so a nested
    ``{"headers": {"Authorization": ...}}`` is seen)."""
    keys: list[str] = []
    strings: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys.extend(str(k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            strings.append(item)
    return keys, strings


def validate_extra(value) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise ValidationError('Must be a JSON object, like {"top_k": 40}.')
    if len(json.dumps(value)) > EXTRA_MAX_CHARS:
        raise ValidationError(f"At most {EXTRA_MAX_CHARS} characters of JSON.")
    keys, strings = _walk(value)
    # PostgreSQL's jsonb cannot store U+0000: refuse it here rather than fail on INSERT.
    if any("\x00" in text for text in keys + strings):
        raise ValidationError("Must not contain NUL characters.")
    secret = sorted(k for k in keys if SECRET_KEY_NAME.search(k))
    if secret:
        raise ValidationError(
            f"Credentials do not belong here ({', '.join(secret)}): name an environment "
            "variable in api_key_env instead."
        )
