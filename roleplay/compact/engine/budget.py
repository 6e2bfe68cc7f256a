"""When compaction runs: by the window's budget, not by a count of turns (seed 002, Compact).

Budget = the model's context limit − its maximum output − the compact config's safety
margin; compaction is due when the real assembled prompt passes ``triggerRatio`` × budget.
The seed's example: 8,192 − 2,048 − 512 = 5,632, and at 0.8 the trigger line is 4,505."""

from __future__ import annotations

import math
from decimal import Decimal


def budget(context_limit: int, max_output_tokens: int, safety_margin_tokens: int) -> int:
    return context_limit - max_output_tokens - safety_margin_tokens


def trigger_line(budget_tokens: int, trigger_ratio: float) -> int:
    """The token count past which compaction is due (``floor``: 5,632 × 0.8 → 4,505)."""
    if not 0 < trigger_ratio < 1:
        raise ValueError("triggerRatio must be strictly between 0 and 1")
    # exact decimal arithmetic: 100 × 0.29 is 29, not the float 28.999…
    return math.floor(Decimal(repr(trigger_ratio)) * budget_tokens)


def due(prompt_tokens: int, trigger: int) -> bool:
    return prompt_tokens > trigger


def due_next(prompt_tokens: int, input_tokens: int, reply_tokens: int, trigger: int) -> bool:
    """Whether the next turn's prompt will pass the trigger, if its input is as long as this
    turn's: this prompt grows by this reply and by the next input (the pre-compaction's
    cue: prepare the next checkpoint in the background, off that turn's path)."""
    return due(prompt_tokens + reply_tokens + input_tokens, trigger)
