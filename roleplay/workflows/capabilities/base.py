"""What every capability module shares: its node ``input`` checked against its JSON schema
(``bad_input`` naming the field; the executor passes the input as written), the turn's
conversation read once for its scope, and a bound on the text a result offers the Actor."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from console.db import run_db
from roleplay.models import Conversation
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityError, NodeOutput

from ..registry import RunScope


class Scoped:
    """A capability built for one run: the class is its registry factory, ``scope`` says
    whose conversation it may read (subclasses set ``name``, ``input_schema``, ``execute``)."""

    name: str
    input_schema: Mapping[str, Any]

    def __init__(self, scope: RunScope) -> None:
        self.scope = scope


BAD_INPUT = "bad_input"
NOT_FOUND = "not_found"
MAX_PROMPT_CHARS = 8_000


def checked_input(schema: Mapping[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` when it satisfies ``schema``, its defaults filled in; else ``bad_input``
    with the first error's path."""
    value = _plain(value)
    try:
        validator = Draft202012Validator(schema)
        error = next(iter(sorted(validator.iter_errors(value), key=lambda e: list(e.path))), None)
    except SchemaError as exc:  # a capability's own bug, still a coded failure
        raise CapabilityError("schema_error", exc.message) from None
    if error is not None:
        where = ".".join(str(p) for p in error.path) or "input"
        raise CapabilityError(
            BAD_INPUT, f"input.{where}: {error.message}".replace("input.input", "input")
        )
    out = dict(value)
    for name, spec in schema.get("properties", {}).items():
        if name not in out and "default" in spec:
            out[name] = spec["default"]
    return out


def _plain(value: Any) -> Any:
    """``value`` with read-only mappings (the executor hands inputs as such) made dicts and
    tuples lists, as the JSON schema validator knows them."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def query_of(call: CapabilityCall, given: Any) -> str:
    """The node's own ``query`` when it has one, else the turn's (the player's words)."""
    return given.strip() if isinstance(given, str) and given.strip() else call.query


def clipped(text: str, limit: int = MAX_PROMPT_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def output_text(output: NodeOutput) -> str:
    """A completed node's result as text: its prompt content, else its value as JSON."""
    result = output.result
    if result.prompt_content:
        return result.prompt_content
    value = result.value
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _conversation(scope: RunScope) -> Conversation:
    found = (
        Conversation.objects.select_related("tenant", "character", "player")
        .filter(tenant_id=scope.tenant_id, pk=scope.conversation_id)
        .first()
    )
    if found is None:
        raise CapabilityError(NOT_FOUND, "the conversation is gone")
    return found


async def conversation_of(scope: RunScope) -> Conversation:
    """The run's conversation, with its tenant, character and player (one query)."""
    return await run_db(_conversation, scope)
