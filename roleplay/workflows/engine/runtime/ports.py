"""What the bounded runtime talks to, as ports (seed ``002`` lines 1328–1420): a model that
answers a list of messages with text or tool calls and its usage, a state store read once
and written by compare-and-set, and the turn's context. No Django: the product's adapters
live in ``roleplay.workflows.runtime_ports``.

A model reply's usage may be missing (``None``), and its ``cost_usd`` may be unknown: the
runtime fails with ``usage_missing`` only when a limit needs what is missing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol


@dataclass(frozen=True)
class Usage:
    """One model call's usage; ``cost_usd`` None when the model does not price its calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class ToolRequest:
    """One tool call the model asked for. ``arguments`` as the model sent them: a JSON
    string (parsed by the runtime) or an already parsed object."""

    id: str
    name: str
    arguments: str | Mapping[str, Any]


@dataclass(frozen=True)
class ModelReply:
    content: str
    tool_calls: tuple[ToolRequest, ...] = ()
    usage: Usage | None = None
    model: str = ""


@dataclass(frozen=True)
class ModelRequest:
    """One loop step's call: the messages so far (OpenAI shape), the tool definitions, the
    step (1-based) and the seconds left before the run's deadline."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    step: int
    timeout_s: float


class Model(Protocol):
    async def complete(self, request: ModelRequest, cancel: asyncio.Event) -> ModelReply: ...


class StateSnapshot(NamedTuple):
    """The saved state (None when nothing was saved yet) and its revision (0 then)."""

    state: Any
    revision: int


@dataclass(frozen=True)
class StateCandidate:
    """What ``prepare_commit`` proposes to save (seed: ``{state, toolsCalled?,
    ledgerEntries?}``)."""

    state: Any
    tools_called: tuple[str, ...] = ()
    ledger_entries: tuple[Any, ...] = ()


class StateStore(Protocol):
    async def get(self) -> StateSnapshot: ...

    async def compare_and_set(self, expected_revision: int, candidate: StateCandidate) -> bool:
        """Save ``candidate`` if the revision is still ``expected_revision``; False when
        another write came first."""
        ...


@dataclass(frozen=True)
class RunContext:
    """The turn the runtime runs for: the player's ``input`` and the ``history`` before it
    (``{role, content}`` items), with the ids a store or a log may want."""

    input: str
    history: Sequence[Mapping[str, str]] = ()
    request_id: str = ""
    source_turn: int | None = None
    source_message_id: str | None = None
    language: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
