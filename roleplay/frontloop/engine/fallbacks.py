"""What the loop does when something goes wrong: the seed's failure table as one pure
decision (seed 002 lines 497–499).

- a controller error, an illegal tool request, or the steps used up: with no usable segment
  yet, ``direct_generation`` (one normal Actor call); with segments, ``finish`` (end the
  loop and post-process what exists);
- an Actor step that returns empty or times out: after a *complete* segment, a
  ``failure_receipt`` to the controller, which decides; on the first Actor step (no
  complete segment), ``propagate``;
- an Actor step failing otherwise, any unrecoverable error, the player's cancel:
  ``propagate`` (the turn fails or is cancelled as today, partial text kept).

Beyond the seed, one row: an ``actor`` request when the shared budget is spent
(``budget_exhausted``) ends the loop like steps used up, rather than asking the Actor for
zero tokens. Why one function: every path of the loop ends here, so the turn trace names the
row taken (``Decision.reason``) and the tests walk the table row by row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# Events.
CONTROLLER_ERROR = "controller_error"
ILLEGAL_REQUEST = "illegal_request"
STEPS_EXHAUSTED = "steps_exhausted"
BUDGET_EXHAUSTED = "budget_exhausted"
ACTOR_EMPTY = "actor_empty"
ACTOR_TIMEOUT = "actor_timeout"
ACTOR_ERROR = "actor_error"
UNRECOVERABLE = "unrecoverable"
CANCELLED = "cancelled"
EVENTS = (
    CONTROLLER_ERROR,
    ILLEGAL_REQUEST,
    STEPS_EXHAUSTED,
    BUDGET_EXHAUSTED,
    ACTOR_EMPTY,
    ACTOR_TIMEOUT,
    ACTOR_ERROR,
    UNRECOVERABLE,
    CANCELLED,
)

Action = Literal["direct_generation", "finish", "failure_receipt", "propagate"]
DIRECT_GENERATION: Action = "direct_generation"
FINISH: Action = "finish"
FAILURE_RECEIPT: Action = "failure_receipt"
PROPAGATE: Action = "propagate"

_ENDS_LOOP = (CONTROLLER_ERROR, ILLEGAL_REQUEST, STEPS_EXHAUSTED, BUDGET_EXHAUSTED)
_RECOVERABLE_ACTOR = (ACTOR_EMPTY, ACTOR_TIMEOUT)


@dataclass(frozen=True)
class Decision:
    """What to do after ``event``: ``action``, and a reason for the turn trace."""

    action: Action
    event: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "event": self.event, "reason": self.reason}


def decide(event: str, *, usable: int, complete: int, detail: str = "") -> Decision:
    """The row of the table for ``event``: ``usable`` segments with text so far, of which
    ``complete`` ended normally; ``detail`` (an error code) goes into the reason."""
    suffix = f" ({detail})" if detail else ""
    if event in _ENDS_LOOP:
        if usable == 0:
            return Decision(DIRECT_GENERATION, event, f"{event}{suffix} before any usable segment")
        return Decision(FINISH, event, f"{event}{suffix} after {usable} segment(s)")
    if event in _RECOVERABLE_ACTOR and complete > 0:
        return Decision(
            FAILURE_RECEIPT,
            event,
            f"{event}{suffix} after a complete segment: the controller decides",
        )
    if event in _RECOVERABLE_ACTOR:
        return Decision(PROPAGATE, event, f"{event}{suffix} on the first actor step")
    if event in (ACTOR_ERROR, UNRECOVERABLE, CANCELLED):
        return Decision(PROPAGATE, event, f"{event}{suffix}")
    return Decision(PROPAGATE, UNRECOVERABLE, f"unknown event {event[:40]!r}")
