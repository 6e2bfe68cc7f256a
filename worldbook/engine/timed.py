"""SillyTavern timed effects (sticky, cooldown, delay) over a plain, caller-stored state dict.

The engine stays pure: the caller passes the conversation's previous state in and stores the
returned one. State is keyed ``"book_id:entry_id"``; each value records the message index the
entry was activated at and the last message its sticky and cooldown periods cover::

    {"book-1:copper-key": {"activated_at": 3, "sticky_until": 5, "cooldown_until": 7}}

Semantics (message indexes, not turns):

* ``delay`` N: the entry is not eligible while ``message_index < N``.
* ``sticky`` N: activated at message i, it stays active through message i+N.
* ``cooldown`` N: after activation at i it cannot activate for messages i+1..i+N; with sticky,
  the cooldown starts when the sticky period ends.

An effect only counts when it was recorded at an *earlier* message. A state recorded at the
same or a later index belongs to a retried or rolled-back message and is recomputed, so
re-running a turn gives the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from worldbook.engine.entry import Entry

NEEDS_CONVERSATION = "timed_effect_needs_conversation"
DELAY_PENDING = "delay_pending"
COOLDOWN = "cooldown"


def has_timed_effect(entry: Entry) -> bool:
    return bool(entry.sticky or entry.cooldown or entry.delay)


def state_key(book_id: str, entry_id: str) -> str:
    return f"{book_id}:{entry_id}"


@dataclass(slots=True)
class TimedStatus:
    """What timed effects say about an entry this message."""

    blocked: str | None = None
    sticky: bool = False
    details: dict[str, Any] | None = None


def _as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class TimedEffects:
    """Reads the incoming state for one message and collects the state to hand back."""

    def __init__(
        self,
        state_in: dict[str, Any] | None,
        book_ids: list[str],
        conversation_id: str | None,
        message_index: int | None,
    ) -> None:
        self.enabled = conversation_id is not None and message_index is not None
        self.message_index = message_index if message_index is not None else 0
        prefixes = tuple(f"{book_id}:" for book_id in book_ids)
        self._passthrough: dict[str, Any] = {}
        self._live: dict[str, dict[str, int | None]] = {}
        for key, value in (state_in or {}).items():
            if not isinstance(key, str):
                continue
            if not self.enabled or not key.startswith(prefixes):
                self._passthrough[key] = value
                continue
            effect = self._parse(value)
            if effect is not None:
                self._live[key] = effect

    def _parse(self, value: Any) -> dict[str, int | None] | None:
        """A still-running effect recorded at an earlier message, or ``None``."""
        if not isinstance(value, dict):
            return None
        activated = _as_int(value.get("activated_at"))
        sticky_until = _as_int(value.get("sticky_until"))
        cooldown_until = _as_int(value.get("cooldown_until"))
        if activated is None or activated >= self.message_index:
            return None
        last = max(x for x in (sticky_until, cooldown_until, -1) if x is not None)
        if self.message_index > last:
            return None
        return {
            "activated_at": activated,
            "sticky_until": sticky_until,
            "cooldown_until": cooldown_until,
        }

    def status(self, key: str, entry: Entry) -> TimedStatus:
        if not has_timed_effect(entry):
            return TimedStatus()
        if not self.enabled:
            return TimedStatus(
                blocked=NEEDS_CONVERSATION,
                details={"needs": ["conversation_id", "message_index"]},
            )
        m = self.message_index
        if entry.delay and m < entry.delay:
            return TimedStatus(blocked=DELAY_PENDING, details={"delay": entry.delay, "at": m})
        effect = self._live.get(key)
        if effect is None:
            return TimedStatus()
        sticky_until = effect["sticky_until"]
        if sticky_until is not None and m <= sticky_until:
            return TimedStatus(sticky=True, details={"sticky_until": sticky_until})
        cooldown_until = effect["cooldown_until"]
        if cooldown_until is not None and m <= cooldown_until:
            return TimedStatus(blocked=COOLDOWN, details={"cooldown_until": cooldown_until})
        return TimedStatus()

    def record_activation(self, key: str, entry: Entry) -> None:
        """Start sticky/cooldown periods for an entry that made it into this message."""
        if not self.enabled or key in self._live:
            return
        if not (entry.sticky or entry.cooldown):
            return
        m = self.message_index
        sticky_until = m + entry.sticky if entry.sticky else None
        cooldown_until = None
        if entry.cooldown:
            cooldown_until = (sticky_until if sticky_until is not None else m) + entry.cooldown
        self._live[key] = {
            "activated_at": m,
            "sticky_until": sticky_until,
            "cooldown_until": cooldown_until,
        }

    def result(self) -> dict[str, Any]:
        """The state to store for the conversation: other books untouched, ours updated."""
        merged: dict[str, Any] = dict(self._passthrough)
        for key in sorted(self._live):
            merged[key] = dict(self._live[key])
        return merged
