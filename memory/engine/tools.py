"""Seed 000's JSON memory tools as the model sees them: ``get_memory {}`` and
``update_memory {expectedRevision, memory}``, in the OpenAI function shape. Their scope (the
tenant, the conversation, the slot) comes from the turn, never from the model's arguments:
the arguments name neither a user nor a tenant. Pure."""

from __future__ import annotations

from typing import Any

from memory.errors import MemoryInvalid

GET_MEMORY = "get_memory"
UPDATE_MEMORY = "update_memory"
NAMES = (GET_MEMORY, UPDATE_MEMORY)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": GET_MEMORY,
            "description": "Read this conversation's memory: {revision, memory}; an empty "
            "memory is {revision: 0, memory: null}.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
    {
        "type": "function",
        "function": {
            "name": UPDATE_MEMORY,
            "description": "Replace this conversation's memory with a whole new JSON object "
            "(never a merge: fields left out are removed). expectedRevision is the revision "
            "the change is based on; on a conflict read again and decide again.",
            "parameters": {
                "type": "object",
                "properties": {
                    "expectedRevision": {"type": "integer", "minimum": 0},
                    "memory": {"type": "object"},
                },
                "required": ["expectedRevision", "memory"],
                "additionalProperties": False,
            },
        },
    },
]


def check_arguments(name: str, arguments: Any) -> dict[str, Any]:
    """The arguments of a call to one of :data:`NAMES`; raises on anything else."""
    if name not in NAMES:
        raise MemoryInvalid("unknown_tool", f"there is no tool {name!r}", {"tool": name})
    if not isinstance(arguments, dict):
        raise MemoryInvalid("invalid_arguments", "arguments must be an object", {"tool": name})
    allowed = set() if name == GET_MEMORY else {"expectedRevision", "memory"}
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise MemoryInvalid(
            "invalid_arguments",
            f"unknown argument {unknown[0]!r}",
            {"tool": name, "field": unknown[0]},
        )
    missing = sorted(allowed - set(arguments))
    if missing:
        raise MemoryInvalid(
            "invalid_arguments",
            f"missing argument {missing[0]!r}",
            {"tool": name, "field": missing[0]},
        )
    return arguments
