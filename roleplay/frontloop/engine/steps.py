"""Executing one accepted step through the ports: an Actor segment (charged to the shared
budget, its picture scheduled when it is a visual beat), an image, a DIO job.

Each returns the receipt the controller reads next, or the fallback :class:`Decision` that
ends the loop. A port's failure is classified here (a timeout, an empty answer, another
error) and handed to ``fallbacks.decide``; an exception other than the task's own
cancellation never escapes (``asyncio.CancelledError`` does, by design: the caller's
``LoopRecord`` keeps what was written).
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from . import fallbacks
from .fallbacks import Decision
from .ports import FrontPorts, ScheduleReceipt, SegmentResult
from .record import LoopRecord, Segment, actor_receipt, failure_receipt
from .text import clip
from .visual_beat import ALREADY_SCHEDULED, auto_schedules, image_target


async def actor(
    ports: FrontPorts, record: LoopRecord, mode: str, cap: int, *, direct: bool = False
) -> dict[str, Any] | Decision:
    """Run one Actor segment with what is left of the budget."""
    result = await _call_actor(ports, record, mode)
    if isinstance(result, Decision):
        return result
    record.actor_steps += 1
    text = result.text if isinstance(result.text, str) else ""
    record.budget, charged = record.budget.charged(result.output_tokens, text)
    segment = None
    if text.strip():
        segment = Segment(
            index=len(record.segments),
            text=text,
            response_mode=mode,
            charged=charged,
            output_tokens=_count(result.output_tokens),
            input_tokens=_count(result.input_tokens),
            finish_reason=clip(result.finish_reason, 40) if result.finish_reason else None,
            complete=result.outcome == "ok",
            direct=direct,
        )
    complete_before = record.complete
    if segment is not None:
        record.segments.append(segment)
    event = _failure(result, segment)
    if event is not None:
        code = clip(result.error_code, 60) if result.error_code else ""
        decision = fallbacks.decide(
            event, usable=record.usable, complete=complete_before, detail=code
        )
        if decision.action != fallbacks.FAILURE_RECEIPT:
            return decision
        return failure_receipt(record, event, cap)
    assert segment is not None
    receipt = actor_receipt(record, segment, cap)
    if auto_schedules(
        mode,
        complete=segment.complete,
        finish_reason=segment.finish_reason,
        steps_left=cap - record.steps,
        index=segment.index,
        pictured=record.pictured,
    ):
        record.steps += 1
        receipt["image"] = await image(ports, record, segment, by="visual_beat")
        record.note(
            step=record.steps, tool="generate_image", by="visual_beat", receipt=receipt["image"]
        )
        receipt["images_scheduled"] = len(record.pictured)
        receipt["steps_left"] = max(cap - record.steps, 0)
    return receipt


async def _call_actor(ports: FrontPorts, record: LoopRecord, mode: str) -> SegmentResult | Decision:
    try:
        result = await ports.run_actor(mode, record.budget.left)
    except asyncio.CancelledError:
        raise
    except TimeoutError:
        return SegmentResult(text="", outcome="timeout", error_code="timeout")
    except Exception as exc:  # the Actor's own failure: the turn fails as today
        record.error = exc
        return fallbacks.decide(
            fallbacks.UNRECOVERABLE,
            usable=record.usable,
            complete=record.complete,
            detail=type(exc).__name__,
        )
    if not isinstance(result, SegmentResult):
        return fallbacks.decide(
            fallbacks.UNRECOVERABLE,
            usable=record.usable,
            complete=record.complete,
            detail="the Actor port returned no SegmentResult",
        )
    return result


def _failure(result: SegmentResult, segment: Segment | None) -> str | None:
    if result.outcome == "timeout":
        return fallbacks.ACTOR_TIMEOUT
    if result.outcome != "ok":
        return fallbacks.ACTOR_ERROR
    if segment is None:
        return fallbacks.ACTOR_EMPTY
    return None


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


async def image(
    ports: FrontPorts, record: LoopRecord, segment: Segment, *, by: str
) -> dict[str, Any]:
    """Schedule the picture of ``segment`` (``by``: ``generate_image`` or ``visual_beat``)."""
    if segment.index in record.pictured:
        return {"scheduled": False, "segment": segment.index, "reason": ALREADY_SCHEDULED}
    receipt = await _schedule(ports.schedule_image(segment))
    if receipt.accepted or receipt.code == "port_error":
        record.pictured.append(segment.index)
    answer: dict[str, Any] = {"scheduled": receipt.accepted, "segment": segment.index, "by": by}
    if not receipt.accepted:
        answer["reason"] = receipt.code or "not_scheduled"
    answer.update(_detail(receipt))
    return answer


async def latest_image(ports: FrontPorts, record: LoopRecord) -> dict[str, Any]:
    """``generate_image``: the latest segment's picture, once."""
    target = image_target(len(record.segments), record.pictured)
    if target.index is None:
        return {"tool": "generate_image", "scheduled": False, "reason": target.reason}
    answer = await image(ports, record, record.segments[target.index], by="generate_image")
    return {"tool": "generate_image", **answer, "images_scheduled": len(record.pictured)}


async def dio(ports: FrontPorts, record: LoopRecord) -> dict[str, Any]:
    """``schedule_dio``: the player's lasting instruction to DIO, once per reply."""
    if record.dio_scheduled:
        return {"tool": "schedule_dio", "accepted": False, "reason": ALREADY_SCHEDULED}
    receipt = await _schedule(ports.schedule_dio())
    record.dio_scheduled = receipt.accepted or receipt.code == "port_error"
    answer: dict[str, Any] = {"tool": "schedule_dio", "accepted": receipt.accepted}
    if not receipt.accepted:
        answer["reason"] = receipt.code or "not_accepted"
    answer.update(_detail(receipt))
    return answer


async def _schedule(call: Any) -> ScheduleReceipt:
    """A scheduling port's receipt; an exception is ``port_error`` (maybe submitted)."""
    try:
        receipt = await call
    except asyncio.CancelledError:
        raise
    except Exception:
        return ScheduleReceipt(False, code="port_error")
    if not isinstance(receipt, ScheduleReceipt):
        return ScheduleReceipt(False, code="port_error")
    return receipt


_RESERVED = frozenset({"tool", "scheduled", "accepted", "segment", "by", "reason"})


def _detail(receipt: ScheduleReceipt) -> dict[str, Any]:
    """The port's ``detail`` fit for the controller: up to 10 plain JSON values, bounded."""
    detail = receipt.detail if isinstance(receipt.detail, dict) else {}
    kept: dict[str, Any] = {}
    for key, value in list(detail.items())[:10]:
        if not isinstance(key, str) or key in _RESERVED:
            continue
        if isinstance(value, str):
            value = clip(value, 200)
        elif isinstance(value, float) and not math.isfinite(value):
            continue
        elif not (isinstance(value, int | float | bool) or value is None):
            continue
        kept[clip(key, 40)] = value
    return kept
