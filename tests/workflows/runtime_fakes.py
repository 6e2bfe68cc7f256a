"""In-memory implementations of the runtime's ports for its pure tests: a model that
answers from a script (and moves a fake clock by each call's duration), a capability that
echoes its arguments, a state store with a real compare-and-set. No sleeping: time is the
fake clock's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityError, CapabilityValue
from roleplay.workflows.engine.runtime import (
    ModelReply,
    ModelRequest,
    StateCandidate,
    StateSnapshot,
    ToolRequest,
    Usage,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def calls(*names: str, args: Any = None) -> tuple[ToolRequest, ...]:
    """A batch of tool calls, ``echo`` arguments by default."""
    arguments = args if args is not None else {"text": "hi"}
    return tuple(ToolRequest(f"call_{i}", name, arguments) for i, name in enumerate(names))


def tools_reply(*names: str, usage: Usage | None = None, args: Any = None) -> ModelReply:
    return ModelReply("", calls(*names, args=args), usage or Usage(10, 5), "fake")


def final(text: str = "done", usage: Usage | None = None) -> ModelReply:
    return ModelReply(text, (), usage or Usage(10, 5), "fake")


@dataclass
class ScriptedModel:
    """Answers each call with the next scripted reply (or ``reply(request)``); each call
    takes ``seconds`` of the fake clock."""

    clock: Clock
    script: list[ModelReply | Callable[[ModelRequest], ModelReply]]
    seconds: float = 0.0
    requests: list[ModelRequest] = field(default_factory=list)

    async def complete(self, request: ModelRequest, cancel: asyncio.Event) -> ModelReply:
        self.requests.append(request)
        self.clock.now += self.seconds
        step = self.script.pop(0)
        return step(request) if callable(step) else step


@dataclass
class Echo:
    """A capability that answers its arguments back (and can fail on demand)."""

    name: str = "echo"
    description: str = "Echo the text back."
    input_schema: dict[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 20}},
            "required": ["text"],
            "additionalProperties": False,
        }
    )
    fail: str | None = None
    seen: list[CapabilityCall] = field(default_factory=list)

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        self.seen.append(call)
        if self.fail == "coded":
            raise CapabilityError("upstream_error", "the service is down")
        if self.fail:
            raise RuntimeError(self.fail)
        return CapabilityValue({"echo": call.input["text"]}, prompt_content=call.input["text"])


@dataclass
class MemoryStore:
    """A state store with a real compare-and-set on an integer revision."""

    state: Any = None
    revision: int = 0
    writes: list[StateCandidate] = field(default_factory=list)

    async def get(self) -> StateSnapshot:
        return StateSnapshot(self.state, self.revision)

    async def compare_and_set(self, expected_revision: int, candidate: StateCandidate) -> bool:
        if expected_revision != self.revision:
            return False
        self.state, self.revision = candidate.state, self.revision + 1
        self.writes.append(candidate)
        return True
