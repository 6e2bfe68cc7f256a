"""History groups (seed 002, Compact): what is compressed as a whole. A group is a user
message and the replies to it (``selected_turns``: derived from the messages themselves),
or the messages that share one group key (``explicit_groups``: the turn that wrote them);
assistant messages before the first user message (the opening) are a group of their own.
The last ``keep_last`` groups are never compressed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


class Message(Protocol):
    @property
    def id(self) -> object: ...
    @property
    def role(self) -> str: ...
    @property
    def content(self) -> str: ...


@dataclass(frozen=True)
class Group:
    messages: tuple

    @property
    def first_id(self) -> str:
        return str(self.messages[0].id)

    @property
    def last_id(self) -> str:
        return str(self.messages[-1].id)


def group(
    messages: Sequence, mode: str = "selected_turns", keys: Sequence | None = None
) -> list[Group]:
    """``messages`` oldest first; ``keys`` (one per message) for ``explicit_groups``."""
    if mode == "explicit_groups":
        if keys is None or len(keys) != len(messages):
            raise ValueError("explicit_groups needs one group key per message")
        found: list[list] = []
        last_key: object = object()
        for message, key in zip(messages, keys, strict=True):
            if not found or key is None or key != last_key:
                found.append([])
            found[-1].append(message)
            last_key = key
        return [Group(tuple(g)) for g in found]
    if mode != "selected_turns":
        raise ValueError(f"unknown boundaryMode {mode!r}")
    groups: list[list] = []
    for message in messages:
        if message.role == "user" or not groups:
            groups.append([])
        groups[-1].append(message)
    return [Group(tuple(g)) for g in groups]


def compressible(groups: Sequence[Group], keep_last: int) -> tuple[list[Group], list[Group]]:
    """(the groups that may be compressed, the ones kept verbatim)."""
    cut = max(len(groups) - keep_last, 0)
    return list(groups[:cut]), list(groups[cut:])


def of_history(messages: Sequence, mode: str) -> list[Group]:
    """The groups of a stored history. With ``explicit_groups`` the group key of a message
    is the turn that wrote it: the player's message it answers (``opening`` before the
    first one)."""
    keys = None
    if mode == "explicit_groups":
        keys, turn = [], "opening"
        for message in messages:
            if message.role == "user":
                turn = str(message.id)
            keys.append(turn)
    return group(messages, mode, keys)


def split_groups(messages: Sequence, mode: str, keep_last: int) -> tuple[list[Group], list[Group]]:
    """(the groups that may be compressed, the last ``keep_last`` kept verbatim)."""
    return compressible(of_history(messages, mode), keep_last)


def flat(groups: Sequence[Group]) -> list:
    return [m for g in groups for m in g.messages]


def split(messages: Sequence, mode: str, keep_last: int) -> tuple[list, list]:
    """(the messages to compress, the messages kept verbatim): whole groups of ``messages``
    (oldest first), never the last ``keep_last``."""
    old, kept = split_groups(messages, mode, keep_last)
    return flat(old), flat(kept)


def shrink(
    candidate: Sequence[Group], excess: int, count: Callable[[Group], int], *, recent: bool
) -> list[Group]:
    """The next, smaller candidate after one ``excess`` tokens too large for the compactor:
    whole groups taken off its newest end (or, ``recent``, off its oldest end: the
    ``bounded_recent`` policy keeps the most recent history) until at least ``excess``
    tokens (``count`` of a group: an estimate) are gone, at least one group, and never the
    last one (a single group too large leaves no candidate: empty)."""
    if len(candidate) <= 1:
        return []
    left = list(candidate)
    removed = 0
    while len(left) > 1 and (removed < excess or len(left) == len(candidate)):
        removed += count(left.pop(0) if recent else left.pop())
    return left
