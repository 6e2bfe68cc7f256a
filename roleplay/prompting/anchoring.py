"""Per-turn blocks that did not change stay where the model server already has them.

The cache-aware layout sends the per-turn blocks (selected lore, the memory pack, Agent V2's
state, the story stage...) at the ``turnContext`` marker, after the history
(``stability``). On the next turn the history has grown by the player's message and the
reply, so the marker stands further on, and a server's prompt cache, which keeps only what
is identical from the start, must process the blocks again even when none changed. Most
turns change none of them (the lore a conversation calls up, the memory pack and the
Director's state mostly stay), so the layout **anchors** them: a block whose text is the
same as in the turn before stays where it was, right after the same stored message (an
``at_depth`` block at the depth that position now has), joined with the other unchanged
blocks of that place in the same order, so the message reads exactly as before. Only
blocks that changed (or are new) go to the marker.

What it costs: an anchored block that then changes moves to the marker, and the prompt
breaks where it stood, so the server processes again every exchange after it. At the marker
the block itself is processed again every turn. Anchoring wins when the block is longer
than the exchanges that pile up after it: a block stays anchored only while it is at least
as long as the average exchange (the player's message and the reply) since its place, in
characters. A long state or stage is anchored; a short lore line in a chat of long replies
stays at the marker, as without anchoring. An anchor is also given up, and the block sent
at the marker again, when the message it follows is no longer the one it followed (an edit,
a rollback, a compaction or the oldest history trimmed away), or when it is more than
:data:`MAX_DEPTH` stored messages from the end: lore and state must stay close enough to
the end for the model to heed them. The classic layout (no marker) is never anchored, nor
is a turn without the previous turn's anchors (the first turn, a preview).

An anchor is ``[digest of the block's text, stored messages before it, fingerprint of the
message it follows]``; the turn's prompt trace keeps them for the next turn (``anchors``).

Pure: plain data in, plain data out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from roleplay.prompting.joining import JOIN  # as the per-turn blocks are joined at the marker
from roleplay.prompting.placement import Block

MAX_DEPTH = 12  # stored messages after an anchored block before it goes back to the marker
ID_PREFIX = "anchored:"


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def fingerprint(history: Sequence[Mapping[str, Any]], after: int) -> str:
    """What identifies the stored message a block placed after ``after`` messages follows."""
    if after <= 0:
        return ""
    message = history[after - 1]
    return digest(f"{message.get('role')}\x00{message.get('content')}")


@dataclass(frozen=True)
class Anchored:
    """The blocks for the marker, the anchored ones as ``at_depth`` blocks (one per place,
    its blocks joined), and the anchors the next turn reads."""

    fresh: list[Block]
    anchored: list[Block] = field(default_factory=list)
    anchors: dict[str, list[Any]] = field(default_factory=dict)


def anchor(
    blocks: Sequence[Block],
    previous: Mapping[str, Any] | None,
    history: Sequence[Mapping[str, Any]],
    *,
    kept_from: int = 0,
    then: Mapping[str, Any] | None = None,
) -> Anchored:
    """``blocks`` (the turn's per-turn blocks for the marker, in their order) split by
    ``previous`` (the anchors of the turn before; None: anchor nothing) against the whole
    stored ``history``, of which the prompt keeps the messages from ``kept_from`` on.
    ``then``: the player's message the marker follows this turn (the shipped layout sends
    the blocks after the input), which the next turn's history holds as its newest stored
    message: the blocks sent at the marker are then anchored after it."""
    length = len(history)
    place = length if then is None else length + 1
    end = fingerprint(history if then is None else [*history, then], place)
    after_chars = _suffix_chars(history)
    fresh: list[Block] = []
    places: dict[int, list[Block]] = {}
    anchors: dict[str, list[Any]] = {}
    for block in blocks:
        kept = _kept(previous.get(block.id), block, history, kept_from) if previous else None
        if kept is not None and not _pays(block, length - kept[1], after_chars[kept[1]]):
            kept = None
        if kept is None:
            fresh.append(block)
            anchors[block.id] = [digest(block.content), place, end]
        else:
            places.setdefault(kept[1], []).append(block)
            anchors[block.id] = kept
    anchored = [
        Block(
            id=f"{ID_PREFIX}{after}",
            position="at_depth",
            content=JOIN.join(b.content for b in group),
            order=group[0].order,
            depth=length - after,
            role="system",
        )
        for after, group in sorted(places.items())
    ]
    return Anchored(fresh, anchored, anchors)


def _pays(block: Block, depth: int, tail_chars: int) -> bool:
    """Whether the block is at least as long as the average exchange of the ``depth``
    messages of ``tail_chars`` characters after its place: the turns it has stayed there
    (an exchange each, the reply alone counting as one when it follows the player's
    message) against what a change would make the server process again."""
    return len(block.content) * ((depth + 1) // 2) >= tail_chars


def _suffix_chars(history: Sequence[Mapping[str, Any]]) -> list[int]:
    """For each index, the characters of the stored messages from it to the end."""
    out = [0] * (len(history) + 1)
    for index in range(len(history) - 1, -1, -1):
        out[index] = out[index + 1] + len(str(history[index].get("content") or ""))
    return out


def _kept(
    given: Any, block: Block, history: Sequence[Mapping[str, Any]], kept_from: int
) -> list[Any] | None:
    """The block's anchor when it holds (same text, same message before it, not too deep
    and not trimmed away, and not at the end already), else None."""
    if not isinstance(given, list | tuple) or len(given) != 3:
        return None
    text, after, mark = given
    if not isinstance(after, int) or isinstance(after, bool):
        return None
    length = len(history)
    if text != digest(block.content) or not kept_from <= after < length:
        return None
    if length - after > MAX_DEPTH or mark != fingerprint(history, after):
        return None
    return [text, after, mark]
