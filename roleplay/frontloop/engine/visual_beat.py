"""Which segment gets a picture, and when the loop schedules one by itself (seed 002 lines
483, 1239 and 1266).

- ``visual_beat`` is an argument of ``actor``, not a tool: when such a segment completes as
  a usable visual moment (text, ended normally, not cut off by the token limit) and the loop
  has a step left, its picture is scheduled without the controller asking. The automatic
  schedule takes a step of its own, so when the segment used the last step there is no
  picture (the seed: "正好用尽步骤时，不能保证还有一次自动排图机会").
- ``generate_image`` pictures the *latest* segment.
- A segment is pictured at most once, whichever way it was asked: a second request for it
  is answered "already scheduled" and schedules nothing.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from .menu import VISUAL_BEAT

NO_SEGMENT = "no_segment"
ALREADY_SCHEDULED = "already_scheduled"
CUT_OFF_REASONS = ("length", "max_tokens")
"""Finish reasons of a segment cut off by the token limit: not a complete visual moment."""


def auto_schedules(
    response_mode: str,
    *,
    complete: bool,
    finish_reason: str | None,
    steps_left: int,
    index: int,
    pictured: Collection[int],
) -> bool:
    """Whether the segment ``index`` just written gets its picture scheduled automatically."""
    return (
        response_mode == VISUAL_BEAT
        and complete
        and finish_reason not in CUT_OFF_REASONS
        and steps_left >= 1
        and index not in pictured
    )


@dataclass(frozen=True)
class ImageTarget:
    """The segment a ``generate_image`` pictures (``index``), or why none (``reason``)."""

    index: int | None
    reason: str | None = None


def image_target(segments: int, pictured: Collection[int]) -> ImageTarget:
    """The target of ``generate_image`` given how many ``segments`` exist: the latest, unless
    there is none or it already has a picture."""
    if segments <= 0:
        return ImageTarget(None, NO_SEGMENT)
    latest = segments - 1
    if latest in pictured:
        return ImageTarget(None, ALREADY_SCHEDULED)
    return ImageTarget(latest)
