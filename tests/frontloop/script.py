"""A scripted turn for the loop's driver: the controller's calls and the Actor's segments
are given in order, and every call the loop makes through the ports is recorded."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from roleplay.frontloop.engine import (
    ControllerError,
    ScheduleReceipt,
    Segment,
    SegmentResult,
    ToolRequest,
)
from roleplay.frontloop.engine.config import parse_director

IMAGES = parse_director(
    {
        "modelConfigId": "controller",
        "skills": [{"name": "illustrate", "afterActorTools": ["generate_image"], "prompt": "P"}],
    }
)


def call(name: str, arguments: Any = None, call_id: str = "") -> ToolRequest:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return ToolRequest(name, text, call_id)


def seg(text: str = "The guard takes the key.", tokens: int | None = 100, **kw) -> SegmentResult:
    return SegmentResult(text=text, output_tokens=tokens, **kw)


class Script:
    def __init__(
        self,
        controller: list[Any],
        actor: list[Any] = (),
        *,
        images: list[Any] = (),
        dio: list[Any] = (),
        cancel: Callable[[Script], bool] | None = None,
    ) -> None:
        self.controller = list(controller)
        self.actor = list(actor)
        self.images = list(images)
        self.dio = list(dio)
        self.cancel = cancel
        self.calls: list[tuple[Any, ...]] = []
        self.seen: list[list[dict[str, Any]]] = []  # the messages of each controller call

    def count(self, port: str) -> int:
        return sum(1 for c in self.calls if c[0] == port)

    async def call_controller(self, messages, tools):
        self.calls.append(("controller", [t["function"]["name"] for t in tools]))
        self.seen.append(copy.deepcopy(messages))
        return _answer(self.controller.pop(0))

    async def run_actor(self, response_mode, max_tokens):
        self.calls.append(("actor", response_mode, max_tokens))
        return _answer(self.actor.pop(0))

    async def schedule_image(self, segment: Segment):
        self.calls.append(("image", segment.index))
        return (
            _answer(self.images.pop(0))
            if self.images
            else ScheduleReceipt(True, None, {"image": 0})
        )

    async def schedule_dio(self):
        self.calls.append(("dio",))
        return _answer(self.dio.pop(0)) if self.dio else ScheduleReceipt(True)

    def cancelled(self) -> bool:
        return bool(self.cancel and self.cancel(self))


def _answer(item: Any) -> Any:
    if isinstance(item, BaseException):
        raise item
    return item


__all__ = ["IMAGES", "ControllerError", "Script", "call", "seg"]
