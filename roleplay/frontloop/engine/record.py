"""What one run of the loop produced: the segments, the trace, the pictures, how it ended;
and the receipts the controller reads after each step (seed 002 lines 481 and 490).

Why a mutable :class:`LoopRecord` beside the frozen :class:`FrontLoopOutcome`: the turn
may be cancelled while a port is awaited (the task is cancelled, nothing is returned), and
the reply's segments and trace must still be kept; the caller passes its own record in and
reads it whatever happens. The outcome is the record frozen at the end.

The reply's text is its segments joined by :data:`SEPARATOR` (the turn streams the
separator before each segment after the first, so what the player saw is what is stored).
Receipts carry the segment index, its length in characters, the output tokens left, the
steps left and the images scheduled so far, plus the segment's text (bounded) so the
controller can read what was written before it chooses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .budget import Budget
from .fallbacks import Decision
from .text import clip

SEPARATOR = "\n\n"
RECEIPT_TEXT_CHARS = 2_000
OVER = "over"


@dataclass(frozen=True)
class Segment:
    """One Actor segment of the reply: index, text, mode and usage (``charged``: what the
    shared budget was charged for it); ``complete``: it ended normally (not a timeout)."""

    index: int
    text: str
    response_mode: str
    charged: int
    output_tokens: int | None = None
    input_tokens: int | None = None
    finish_reason: str | None = None
    complete: bool = True
    direct: bool = False

    def to_json(self) -> dict[str, Any]:
        """As kept in the message's ``segments[]``."""
        return {
            "index": self.index,
            "text": self.text,
            "response_mode": self.response_mode,
            "usage": {
                "output_tokens": self.output_tokens,
                "input_tokens": self.input_tokens,
                "charged_tokens": self.charged,
            },
            "finish_reason": self.finish_reason,
            "complete": self.complete,
            "direct": self.direct,
        }


@dataclass
class LoopRecord:
    """The loop's running state (pass one in to keep it if the turn is cancelled)."""

    budget: Budget = field(default_factory=lambda: Budget(0))
    segments: list[Segment] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    pictured: list[int] = field(default_factory=list)
    dio_scheduled: bool = False
    steps: int = 0
    actor_steps: int = 0
    error: BaseException | None = None

    def note(self, **entry: Any) -> None:
        self.trace.append(entry)

    @property
    def usable(self) -> int:
        return len(self.segments)

    @property
    def complete(self) -> int:
        return sum(1 for s in self.segments if s.complete)


@dataclass(frozen=True)
class FrontLoopOutcome:
    """How the loop ended (``ending``: ``over``, ``finish``, ``direct_generation`` or
    ``propagate``; ``decision``: the fallback row, None after ``over``), with everything
    it produced. ``error``: the exception to raise when the ending is ``propagate``."""

    ending: str
    decision: Decision | None
    segments: tuple[Segment, ...]
    trace: tuple[dict[str, Any], ...]
    images: tuple[int, ...]
    dio_scheduled: bool
    steps: int
    tokens_left: int
    error: BaseException | None = None

    @property
    def text(self) -> str:
        return joined_text(self.segments)


def joined_text(segments: tuple[Segment, ...] | list[Segment]) -> str:
    return SEPARATOR.join(s.text for s in segments)


def outcome_of(record: LoopRecord, decision: Decision | None) -> FrontLoopOutcome:
    return FrontLoopOutcome(
        ending=OVER if decision is None else decision.action,
        decision=decision,
        segments=tuple(record.segments),
        trace=tuple(record.trace),
        images=tuple(record.pictured),
        dio_scheduled=record.dio_scheduled,
        steps=record.steps,
        tokens_left=record.budget.left,
        error=record.error,
    )


def actor_receipt(record: LoopRecord, segment: Segment, cap: int) -> dict[str, Any]:
    """The controller's receipt for a written segment."""
    return {
        "tool": "actor",
        "ok": True,
        "segment": segment.index,
        "response_mode": segment.response_mode,
        "chars": len(segment.text),
        "tokens_left": record.budget.left,
        "steps_left": max(cap - record.steps, 0),
        "images_scheduled": len(record.pictured),
        "text": clip(segment.text, RECEIPT_TEXT_CHARS),
    }


def failure_receipt(record: LoopRecord, event: str, cap: int) -> dict[str, Any]:
    """The controller's receipt for an Actor step that returned empty or timed out after a
    complete segment: it decides what comes next."""
    kept = record.segments[-1].index if record.segments else None
    return {
        "tool": "actor",
        "ok": False,
        "error": event,
        "segment": kept,
        "chars": len(record.segments[-1].text) if record.segments else 0,
        "tokens_left": record.budget.left,
        "steps_left": max(cap - record.steps, 0),
        "images_scheduled": len(record.pictured),
    }
