"""What the turn needs from DIO, whichever backend serves it, and the values exchanged.

The seed's protocol (``002`` lines 1277–1327): submit a player's raw input
(``POST /v1/chat``), follow its task by request id, read the active prompt of one
player + conversation + target prompt. :class:`DioBackend` is that protocol as Python; the
internal backend (our own DIO, a database read and a Celery compile) and the external
adapter (HTTP to an outside service) both implement it, so either side can be swapped.

Derived ids (the seed's, so both sides agree without a lookup): the DIO conversation is
``dio_<conversation>``, the request ``<turn>:dio``, the task message ``<turn>:dio:assistant``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from console.failures import Unavailable

TaskState = Literal["processing", "succeeded", "failed", "timed_out"]
TERMINAL: frozenset[str] = frozenset({"succeeded", "failed", "timed_out"})


def dio_conversation_id(conversation_id: str) -> str:
    return f"dio_{conversation_id}"


def request_id(turn_id: str) -> str:
    return f"{turn_id}:dio"


def task_message_id(turn_id: str) -> str:
    return f"{turn_id}:dio:assistant"


@dataclass(frozen=True)
class Identity:
    """Whose prompt: the player (``userId``), the conversation, the target prompt."""

    user_id: str
    conversation_id: str
    target_prompt_id: str


@dataclass(frozen=True)
class ScheduleRequest:
    """One submission: the turn it came from and the player's raw input of that turn."""

    identity: Identity
    turn_id: str
    instruction: str
    language: str = ""


@dataclass(frozen=True)
class Receipt:
    """The accepted submission (the seed's receipt, ``appliesFrom`` always next_turn)."""

    dio_conversation_id: str
    request_id: str
    task_message_id: str
    accepted: bool = True
    applies_from: str = "next_turn"

    def as_json(self) -> dict[str, object]:
        return {
            "accepted": self.accepted,
            "dioConversationId": self.dio_conversation_id,
            "requestId": self.request_id,
            "taskMessageId": self.task_message_id,
            "appliesFrom": self.applies_from,
        }


@dataclass(frozen=True)
class TaskStatus:
    """A submission's state; ``prompt_changed`` is meaningful once terminal."""

    request_id: str
    status: TaskState
    prompt_changed: bool = False
    source_version_id: str | None = None
    compiled_prompt_sha256: str | None = None
    error_code: str | None = None
    error_message: str | None = None


@dataclass(frozen=True)
class ActivePrompt:
    """The prompt in force for an identity: a complete replacement of the character prompt."""

    version: int
    version_id: str
    compiled_prompt: str
    sha256: str
    changeset: list[dict[str, object]] = field(default_factory=list)
    source_version_id: str | None = None


class DioError(Unavailable):
    """A backend failure with a stable code (``dio_unavailable``, ``dio_identity_mismatch``,
    ``dio_duplicate``, ``dio_hash_mismatch`` …): ``DioError(code, message)``."""


class DioBackend(Protocol):
    """The protocol both backends speak. Every method may raise :class:`DioError`.

    ``announces``: accepting sends ``dio.accepted`` itself, so the turn does not send it a
    second time. ``read_with_turn``: the turn reads the prompt in force with its first
    statement rather than through :meth:`active_prompt`. Both false for a service elsewhere."""

    announces: bool
    read_with_turn: bool

    async def schedule(self, request: ScheduleRequest) -> Receipt: ...

    async def task(self, request_id: str) -> TaskStatus | None: ...

    async def active_prompt(self, identity: Identity) -> ActivePrompt | None: ...
