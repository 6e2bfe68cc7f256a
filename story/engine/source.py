"""What Story's models read of the conversation (seed: ``compileStorySource``): the
character's real name, the definition's first 12,000 characters, the opening's first 3,000,
and the last 18 non-empty user/assistant messages, each cut to 3,000. A settlement reads the
accepted prose in full by message id; these cuts are for the initialiser, the action reader
and the planners only."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

DEFINITION_CHARS = 12_000
OPENING_CHARS = 3_000
RECENT_MESSAGES = 18
MESSAGE_CHARS = 3_000
ROLES = ("user", "assistant")


@dataclass(frozen=True)
class StorySource:
    character: str
    definition: str
    opening: str
    recent: tuple[tuple[str, str], ...]  # (role, text), oldest first

    def render(self) -> str:
        lines = [f"Character: {self.character}", "", "Definition:", self.definition]
        if self.opening:
            lines += ["", "Opening:", self.opening]
        if self.recent:
            lines += ["", "Recent messages:"]
            lines += [f"[{role}] {text}" for role, text in self.recent]
        return "\n".join(lines).strip()


def compile_source(
    character: str, definition: str, opening: str, history: Iterable[tuple[str, str]]
) -> StorySource:
    """``history`` is (role, text) oldest first; other roles and blank messages are skipped."""
    kept = [(role, text) for role, text in history if role in ROLES and (text or "").strip()]
    recent = tuple((role, text[:MESSAGE_CHARS]) for role, text in kept[-RECENT_MESSAGES:])
    return StorySource(
        character=character,
        definition=(definition or "")[:DEFINITION_CHARS],
        opening=(opening or "")[:OPENING_CHARS],
        recent=recent,
    )
