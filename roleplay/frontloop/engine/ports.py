"""What the loop needs from the turn, as a Protocol, and the values exchanged through it.

The loop's rules are pure; the model calls, the streaming to the player, the image slots
and the DIO service are the turn's. The driver (``loop.run_front_loop``) only talks to a
:class:`FrontPorts`, so the same rules run in a real turn (the plug-in's adapter over the
gateway) and in the tests (a scripted object), and the tests exercise the real driver.

Contract of each port (what the driver assumes):

- ``call_controller(messages, tools)``: one controller call with ``tools`` and
  ``tool_choice`` required or auto; returns its first tool call as a :class:`ToolRequest`,
  ``None`` when it answered without one, or a :class:`ControllerError`; an exception counts
  as a controller error. The call is recorded with purpose :data:`CONTROLLER_PURPOSE`.
- ``run_actor(response_mode, max_tokens)``: one normal Actor call (its prompt, phases,
  worldbook, memory, Agent V2 block), streamed to the player as part of the reply, asked
  for at most ``max_tokens``; returns a :class:`SegmentResult` (a timeout may also be
  raised as ``TimeoutError``; any other exception is unrecoverable).
- ``schedule_image(segment)``: write the image slot and enqueue the drawing; returns a
  :class:`ScheduleReceipt`. ``accepted=False`` must mean nothing was submitted (the loop may
  try again); an exception is taken as "maybe submitted" and the segment is not tried again.
- ``schedule_dio()``: hand the player's input to DIO; a :class:`ScheduleReceipt`.
- ``cancelled()``: whether the player cancelled (polled between steps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .requests import ToolRequest

if TYPE_CHECKING:
    from .record import Segment

CONTROLLER_PURPOSE = "front_controller"
"""The ``ModelCall.purpose`` of the controller's calls (recorded apart from the Actor's)."""

SegmentOutcome = Literal["ok", "timeout", "error"]


@dataclass(frozen=True)
class SegmentResult:
    """One Actor call: its ``text`` (what streamed, even when it timed out), how it ended,
    and its usage (``output_tokens`` None: the usage reported none)."""

    text: str
    outcome: SegmentOutcome = "ok"
    output_tokens: int | None = None
    input_tokens: int | None = None
    finish_reason: str | None = "stop"
    error_code: str | None = None


@dataclass(frozen=True)
class ControllerError:
    """The controller call failed: a code (``timeout``, ``upstream_error``…) and a message."""

    code: str
    message: str = ""


@dataclass(frozen=True)
class ScheduleReceipt:
    """A port's answer to scheduling an image or a DIO job: ``accepted``, else a ``code``;
    ``detail`` (JSON) is passed on to the controller (an image number, a job id)."""

    accepted: bool
    code: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


ControllerReply = ToolRequest | ControllerError | None


class FrontPorts(Protocol):
    """The turn, as the loop sees it (module doc: the contract of each port)."""

    async def call_controller(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> ControllerReply: ...

    async def run_actor(self, response_mode: str, max_tokens: int) -> SegmentResult: ...

    async def schedule_image(self, segment: Segment) -> ScheduleReceipt: ...

    async def schedule_dio(self) -> ScheduleReceipt: ...

    def cancelled(self) -> bool: ...
