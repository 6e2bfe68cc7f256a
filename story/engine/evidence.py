"""Evidence: what a story event rests on. Never the text itself (the chat keeps it), but the
message's id, the SHA-256 of its text when it was captured, its kind and its source position,
so a settlement reads the full stored text again by id and knows when it changed since."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Literal

Kind = Literal["user_action", "synthetic_continue", "prose"]
KINDS: tuple[str, ...] = ("user_action", "synthetic_continue", "prose")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Evidence:
    message_id: str
    sha256: str
    kind: Kind
    source_position: int

    def matches(self, text: str | None) -> bool:
        """Whether ``text`` (the message as stored now; None when it is gone) is what was
        captured."""
        return text is not None and digest(text) == self.sha256

    def as_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Evidence:
        kind = data["kind"]
        if kind not in KINDS:
            raise ValueError(f"unknown evidence kind {kind!r}")
        return cls(
            message_id=str(data["message_id"]),
            sha256=str(data["sha256"]),
            kind=kind,
            source_position=int(data["source_position"]),
        )


def capture(message_id: str, text: str, kind: Kind, source_position: int) -> Evidence:
    if kind not in KINDS:
        raise ValueError(f"unknown evidence kind {kind!r}")
    if source_position < 0:
        raise ValueError("source_position must not be negative")
    return Evidence(str(message_id), digest(text), kind, source_position)


def changed(evidence: list[Evidence], stored: dict[str, str | None]) -> list[Evidence]:
    """The pieces whose message is gone from ``stored`` (id → text now) or whose text changed
    since it was captured: the console's "changed since captured" badge, and a settlement's
    reason to wait (``unknown``) instead of judging other prose."""
    return [e for e in evidence if not e.matches(stored.get(e.message_id))]
