"""The size cap of a saved story envelope (``storyV1.maxStateBytes``, UTF-8 bytes of its
canonical JSON). Over the cap is a failure: evidence is never trimmed to fit."""

from __future__ import annotations

import json


class StateTooLarge(ValueError):
    code = "story_state_too_large"

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the story state is {size} bytes; the limit is {limit}")
        self.size, self.limit = size, limit


def canonical(envelope: dict) -> str:
    """The envelope as saved: sorted keys, no spaces, non-ASCII kept (bytes count as UTF-8)."""
    return json.dumps(envelope, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def state_bytes(envelope: dict) -> int:
    return len(canonical(envelope).encode("utf-8"))


def check_size(envelope: dict, limit: int) -> int:
    """The envelope's size in bytes; :class:`StateTooLarge` when it is over ``limit``."""
    size = state_bytes(envelope)
    if size > limit:
        raise StateTooLarge(size, limit)
    return size
