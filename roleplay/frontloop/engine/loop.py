"""The front tool loop's driver: ask the controller, check its call, execute it, hand back
the receipt, until ``over``, a fallback, or the step cap (seed 002 lines 470–499).

One step: the controller is called with the messages so far and the menu's tools; its call
is read against the menu (``requests``); an accepted call is executed through the ports
(``steps``) and echoed into the messages as an assistant tool call plus a ``tool`` message
with the receipt, so the controller reads each result before it chooses the next step. A
refused call, a controller error, the cap reached, a spent budget, a failed Actor step or
the player's cancel go to the failure table (``fallbacks.decide``), whose row ends the loop
(or, for a recoverable Actor failure after a complete segment, becomes the receipt).

``direct_generation`` is carried out here when ``direct_on_fallback`` (the default): one
normal Actor call (``complete``, the whole budget), so every ending but ``propagate``
leaves at least one segment. Every step and decision is in the outcome's ``trace``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from . import fallbacks, steps
from .budget import Budget, actor_budget, step_cap
from .config import DirectorConfig
from .fallbacks import Decision
from .menu import COMPLETE, Menu, menu_for
from .ports import ControllerError, FrontPorts
from .prompt import (
    FRONT_CONTROLLER_PROMPT,
    call_id,
    controller_system,
    opening_messages,
    step_messages,
)
from .record import OVER, FrontLoopOutcome, LoopRecord, outcome_of
from .requests import ActorStep, ImageStep, OverStep, Rejection, Step, ToolRequest, read_request
from .text import clip


@dataclass(frozen=True)
class LoopSettings:
    """One reply's loop: the scenario's ``director``, the player's input, the controller's
    prompt (its preset's ``front_controller`` role prompt), the Actor config's effective
    ``max_tokens``, whether an image config and DIO are wired."""

    director: DirectorConfig
    player_input: str
    controller_prompt: str = FRONT_CONTROLLER_PROMPT
    actor_max_tokens: int | None = None
    image_config: bool = False
    dio: bool = False
    direct_on_fallback: bool = True


async def run_front_loop(
    ports: FrontPorts, settings: LoopSettings, *, record: LoopRecord | None = None
) -> FrontLoopOutcome:
    """Run one reply through the controller; ``record`` (optional) is filled as the loop
    goes, for a caller that must keep the segments if its task is cancelled."""
    record = record if record is not None else LoopRecord()
    menu = menu_for(settings.director, image_config=settings.image_config, dio=settings.dio)
    cap = step_cap(menu.dio)
    record.budget = Budget(actor_budget(settings.actor_max_tokens))
    system = controller_system(settings.controller_prompt, settings.director.skills)
    record.messages[:] = opening_messages(system, settings.player_input)
    record.note(event="start", menu=list(menu.names), step_cap=cap, budget=record.budget.total)
    decision = await _run_steps(ports, record, menu, cap)
    if (
        decision is not None
        and decision.action == fallbacks.DIRECT_GENERATION
        and settings.direct_on_fallback
    ):
        decision = await _direct(ports, record, decision)
    record.note(
        event="end",
        ending=OVER if decision is None else decision.action,
        decision=None if decision is None else decision.to_json(),
        steps=record.steps,
        tokens_left=record.budget.left,
    )
    return outcome_of(record, decision)


async def _run_steps(
    ports: FrontPorts, record: LoopRecord, menu: Menu, cap: int
) -> Decision | None:
    """The steps until one ends the loop: None after ``over``, else the fallback row."""
    tools = menu.specs()
    while record.steps < cap:
        if _cancelled(ports):
            return _decide(record, fallbacks.CANCELLED)
        reply = await _ask(ports, record, tools)
        if isinstance(reply, Decision):
            return reply
        step = read_request(reply, menu, actor_steps=record.actor_steps)
        if isinstance(step, Rejection):
            record.note(step=record.steps + 1, rejected=step.to_json())
            return _decide(record, fallbacks.ILLEGAL_REQUEST, step.code)
        record.steps += 1
        number = record.steps
        if isinstance(step, OverStep):
            record.note(step=number, tool=step.tool)
            return None
        answer = await _execute(ports, record, step, cap)
        if isinstance(answer, Decision):
            if _cancelled(ports):  # the Actor stopped because the player cancelled
                answer = _decide(record, fallbacks.CANCELLED)
            record.note(step=number, tool=step.tool, failed=answer.event)
            return answer
        arguments = _arguments(step)
        record.note(
            step=number,
            tool=step.tool,
            arguments=arguments,
            receipt={k: v for k, v in answer.items() if k != "text"},
        )
        assert isinstance(reply, ToolRequest)
        ident = call_id(reply.call_id, number)
        record.messages.extend(step_messages(ident, step.tool, arguments, answer))
    if _cancelled(ports):
        return _decide(record, fallbacks.CANCELLED)
    return _decide(record, fallbacks.STEPS_EXHAUSTED, f"{cap} steps")


async def _ask(
    ports: FrontPorts, record: LoopRecord, tools: list[dict[str, Any]]
) -> ToolRequest | None | Decision:
    """The controller's next call, or the fallback row of its failure."""
    try:
        reply = await ports.call_controller(list(record.messages), tools)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a controller that cannot answer: the table decides
        record.note(event="controller_error", code=type(exc).__name__)
        return _decide(record, fallbacks.CONTROLLER_ERROR, type(exc).__name__)
    if isinstance(reply, ControllerError):
        code = clip(reply.code, 60)
        record.note(event="controller_error", code=code, message=clip(reply.message, 300))
        return _decide(record, fallbacks.CONTROLLER_ERROR, code)
    return reply if isinstance(reply, ToolRequest) else None


async def _execute(
    ports: FrontPorts, record: LoopRecord, step: Step, cap: int
) -> dict[str, Any] | Decision:
    if isinstance(step, ActorStep):
        if record.budget.left <= 0:
            return _decide(record, fallbacks.BUDGET_EXHAUSTED)
        return await steps.actor(ports, record, step.response_mode, cap)
    if isinstance(step, ImageStep):
        return await steps.latest_image(ports, record)
    return await steps.dio(ports, record)


async def _direct(ports: FrontPorts, record: LoopRecord, decision: Decision) -> Decision:
    """The fallback's one normal Actor call; the ending stays ``direct_generation`` unless
    that call fails too (then the turn fails as today)."""
    if _cancelled(ports):
        return _decide(record, fallbacks.CANCELLED)
    record.note(event="direct_generation", reason=decision.reason)
    answer = await steps.actor(ports, record, COMPLETE, record.steps, direct=True)
    if isinstance(answer, Decision):
        record.note(event="direct_generation_failed", decision=answer.to_json())
        return answer
    return decision


def _decide(record: LoopRecord, event: str, detail: str = "") -> Decision:
    return fallbacks.decide(event, usable=record.usable, complete=record.complete, detail=detail)


def _arguments(step: Step) -> dict[str, Any]:
    return {"responseMode": step.response_mode} if isinstance(step, ActorStep) else {}


def _cancelled(ports: FrontPorts) -> bool:
    try:
        return bool(ports.cancelled())
    except Exception:  # a cancel flag that cannot be read is not a cancel
        return False
