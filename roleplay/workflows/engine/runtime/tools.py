"""The runtime's tools: the capabilities it was given, and nothing else.

Each capability becomes one function definition (its name, its description, its
``input_schema`` as the parameters). A tool call's arguments are parsed (a JSON string or
an object) and validated against that schema (JSON Schema, the draft the schema declares,
2020-12 by default). A call that cannot run — an unknown tool, arguments that are not a
JSON object, arguments the schema refuses — is **not** a failure of the run: its error goes
back to the model as that call's tool result (``unknown_tool``, ``bad_arguments``,
``invalid_arguments``), so the model can correct itself within ``maxSteps``; it still counts
towards ``maxToolCalls``. A capability that raises is the same (its ``CapabilityError`` code,
else ``tool_failed``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import validators
from jsonschema.exceptions import SchemaError

from ..contracts import Capability, CapabilityCall, CapabilityError, CapabilityValue
from .ports import ToolRequest


def plain(value: Any) -> Any:
    """``value`` with read-only mappings (the executor hands inputs as such) made dicts and
    tuples lists, as JSON Schema knows them."""
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


class Toolbox:
    """The capabilities by name, their definitions and their validators."""

    def __init__(self, capabilities: Sequence[Capability]) -> None:
        self.by_name: dict[str, Capability] = {}
        self._validators: dict[str, Any] = {}
        for capability in capabilities:
            if capability.name in self.by_name:
                raise ValueError(f"tool {capability.name!r} is given twice")
            schema = plain(capability.input_schema or {"type": "object"})
            cls = validators.validator_for(schema, default=validators.Draft202012Validator)
            try:
                cls.check_schema(schema)
            except SchemaError as exc:
                raise ValueError(f"tool {capability.name!r} has an invalid schema: {exc}") from exc
            self.by_name[capability.name] = capability
            self._validators[capability.name] = cls(schema)

    def definitions(self) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": str(getattr(capability, "description", "") or name),
                    "parameters": plain(capability.input_schema or {"type": "object"}),
                },
            }
            for name, capability in self.by_name.items()
        ]

    def arguments(self, request: ToolRequest) -> dict[str, Any]:
        """The call's arguments, parsed and valid, or a ``CapabilityError``."""
        if request.name not in self.by_name:
            raise CapabilityError("unknown_tool", f"there is no tool {request.name!r}")
        raw = request.arguments
        if isinstance(raw, str):
            try:
                raw = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                raise CapabilityError("bad_arguments", f"arguments are not JSON: {exc}") from exc
        if not isinstance(raw, Mapping):
            raise CapabilityError("bad_arguments", "arguments must be a JSON object")
        raw = plain(raw)
        errors = sorted(self._validators[request.name].iter_errors(raw), key=str)
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
            raise CapabilityError("invalid_arguments", f"{where}: {errors[0].message}")
        return dict(raw)

    async def call(self, request: ToolRequest, query: str, cancel: asyncio.Event) -> dict[str, Any]:
        """Run one call; its record (``status`` ``ok`` or ``error``), never an exception but
        a cancel."""
        record: dict[str, Any] = {"id": request.id, "name": request.name}
        try:
            arguments = self.arguments(request)
            record["arguments"] = arguments
            call = CapabilityCall(node_id=request.id, input=arguments, query=query, dependencies={})
            value = await self.by_name[request.name].execute(call, cancel)
        except asyncio.CancelledError:
            raise
        except CapabilityError as exc:
            return {
                **record,
                "status": "error",
                "error": {"code": exc.code, "message": exc.message},
            }
        except Exception as exc:
            return {
                **record,
                "status": "error",
                "error": {"code": "tool_failed", "message": str(exc)},
            }
        if not isinstance(value, CapabilityValue):
            error = {"code": "tool_failed", "message": "the tool returned no value"}
            return {**record, "status": "error", "error": error}
        record.update(status="ok", value=value.value)
        if value.prompt_content is not None:
            record["prompt_content"] = value.prompt_content
        return record


def tool_message(record: Mapping[str, Any]) -> dict[str, Any]:
    """A call's record as the ``tool`` message the model reads next."""
    if record["status"] == "ok":
        body: dict[str, Any] = {"value": record.get("value")}
        if record.get("prompt_content") is not None:
            body["promptContent"] = record["prompt_content"]
    else:
        body = {"error": record["error"]}
    return {
        "role": "tool",
        "tool_call_id": record["id"],
        "content": json.dumps(body, ensure_ascii=False, default=str),
    }


def assistant_message(content: str, calls: Sequence[ToolRequest]) -> dict[str, Any]:
    """The model's tool-calling turn, as it goes back into the messages."""
    return {
        "role": "assistant",
        "content": content or "",
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments
                    if isinstance(call.arguments, str)
                    else json.dumps(plain(call.arguments), ensure_ascii=False),
                },
            }
            for call in calls
        ],
    }
