"""The turn as the front tool loop sees it (``engine.ports.FrontPorts``): the controller's
calls through the gateway (``ModelCall.purpose = "front_controller"``), the Actor's
segments streamed into the one reply (``turns.reply.Reply.segment``), the pictures and the
DIO job the loop schedules.

A picture is only noted here: its slot can exist only on a stored assistant message, so the
plug-in writes the slots once the reply is committed (``plugin``), and the turn never waits
for a drawing. ``schedule_dio`` is the DIO plug-in's (``roleplay.dio.plugin.schedule``): the
player's raw input of the turn, submitted to the scenario's DIO backend; offered only when
that plug-in made one for the turn (the menu's ``dio``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from console.db import run_db
from roleplay.dio import plugin as dio
from roleplay.dio.engine.ports import DioError
from roleplay.frontloop.engine import record as loop_record
from roleplay.frontloop.engine.ports import (
    CONTROLLER_PURPOSE,
    ControllerError,
    ControllerReply,
    ScheduleReceipt,
    SegmentResult,
)
from roleplay.frontloop.engine.requests import ToolRequest
from roleplay.llm.errors import ModelCancelled, ModelError, ModelTimeout
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.models import ModelConfig
from roleplay.turns.context import TurnContext
from roleplay.turns.reply import Reply

# The controller answers with one function call: its own output stays small.
CONTROLLER_MAX_TOKENS = 512


@dataclass
class Pictures:
    """The pictures the loop scheduled in this reply: each pictured segment's text, the
    image index being the place in the list."""

    wanted: list[str] = field(default_factory=list)
    available: bool = False


@dataclass
class TurnPorts:
    """``FrontPorts`` over one turn: its context, the reply being streamed, the controller's
    model config, the pictures scheduled so far."""

    ctx: TurnContext
    reply: Reply
    controller: ModelConfig | None
    pictures: Pictures

    async def call_controller(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> ControllerReply:
        turn = self.ctx.turn
        gateway = Gateway(
            turn.tenant,
            self.controller,
            CONTROLLER_PURPOSE,
            turn_id=turn.id,
            run_db=run_db,
            writes=self.reply.writes,
        )
        request = ModelRequest(
            messages,
            tools=tools,
            tool_choice="required",
            parallel_tool_calls=False,
            max_tokens=CONTROLLER_MAX_TOKENS,
        )
        try:
            result = await gateway.complete(request, cancel=self.reply.cancel)
        except ModelCancelled:
            raise
        except ModelError as exc:
            return ControllerError(exc.code, str(exc))
        if not result.tool_calls:
            return None
        call = result.tool_calls[0]
        return ToolRequest(call.name, json.dumps(call.arguments), call.id)

    async def run_actor(self, response_mode: str, max_tokens: int) -> SegmentResult:
        try:
            segment = await self.reply.segment(
                max_tokens=max_tokens, separator=loop_record.SEPARATOR
            )
        except ModelTimeout as exc:
            return SegmentResult(
                text=self.reply.current, outcome="timeout", error_code=exc.code, finish_reason=None
            )
        result = segment.result
        if result is None:
            return SegmentResult(text=segment.text, outcome="error", error_code="no_result")
        return SegmentResult(
            text=segment.text,
            output_tokens=result.usage.output_tokens,
            input_tokens=result.usage.input_tokens,
            finish_reason=result.finish_reason,
        )

    async def schedule_image(self, segment: loop_record.Segment) -> ScheduleReceipt:
        if not self.pictures.available:
            return ScheduleReceipt(False, "no_image_config")
        index = len(self.pictures.wanted)
        self.pictures.wanted.append(segment.text)
        return ScheduleReceipt(True, detail={"image": index, "status": "scheduled"})

    async def schedule_dio(self) -> ScheduleReceipt:
        try:
            receipt = await dio.schedule(self.ctx)
        except DioError as exc:
            return ScheduleReceipt(False, exc.code)
        return ScheduleReceipt(True, detail=receipt)

    def cancelled(self) -> bool:
        return self.reply.cancel.is_set()
