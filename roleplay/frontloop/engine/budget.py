"""The loop's limits: how many steps, and the Actor output all segments share (seed 002
lines 481–482).

- At most :data:`MAX_STEPS` steps (12); one more when ``schedule_dio`` is offered (13). A
  step is one executed request of the controller, and an image scheduled automatically
  after a ``visual_beat`` segment (``visual_beat``), so the cap bounds every model call
  and every scheduled job of a reply.
- The Actor segments of one reply share one output budget: the effective ``max_tokens`` of
  the Actor's model config, :data:`DEFAULT_ACTOR_TOKENS` (2,048) when it has none. Each
  segment is asked for at most what is left. The controller's own calls are not charged
  here: they are recorded apart (``ModelCall.purpose = "front_controller"``).
- A segment whose usage reports no output tokens is charged the whole remainder (the seed's
  rule: what was not measured cannot be assumed cheap). A segment with text whose usage
  says 0 output tokens is the same case (a server that fills usage with zeros). A report
  above what was left is charged what was left: the budget never goes below zero.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_STEPS = 12
MAX_STEPS_WITH_DIO = 13
DEFAULT_ACTOR_TOKENS = 2_048


def step_cap(dio_offered: bool) -> int:
    """The most steps a reply may take: 12, or 13 with ``schedule_dio`` on the menu."""
    return MAX_STEPS_WITH_DIO if dio_offered else MAX_STEPS


def actor_budget(max_tokens: object) -> int:
    """The shared output budget from the Actor config's effective ``max_tokens``: a positive
    integer as it is; absent, zero, negative or not an integer: 2,048."""
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0:
        return max_tokens
    return DEFAULT_ACTOR_TOKENS


def charge(output_tokens: int | None, text: str, left: int) -> int:
    """What one segment costs, given what was ``left``: its reported output tokens (at most
    ``left``), or all of ``left`` when the usage reports none."""
    left = max(left, 0)
    if not isinstance(output_tokens, int) or isinstance(output_tokens, bool) or output_tokens < 0:
        return left
    if output_tokens == 0 and text.strip():
        return left
    return min(output_tokens, left)


@dataclass(frozen=True)
class Budget:
    """The shared Actor budget: ``total`` tokens, ``spent`` so far."""

    total: int
    spent: int = 0

    @property
    def left(self) -> int:
        return max(self.total - self.spent, 0)

    def charged(self, output_tokens: int | None, text: str) -> tuple[Budget, int]:
        """The budget after one segment, and what that segment was charged."""
        cost = charge(output_tokens, text, self.left)
        return Budget(total=self.total, spent=self.spent + cost), cost
