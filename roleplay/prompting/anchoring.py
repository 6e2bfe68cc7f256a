"""Per-turn blocks stay where the model server already has them: unchanged ones, and within
a budget the versions that are no longer current.

The cache-aware layout sends the per-turn blocks (selected lore, the memory pack, Agent V2's
state, the story stage...) at the ``turnContext`` marker, after the history
(``stability``). On the next turn the history has grown by the player's message and the
reply, so the marker stands further on, and a server's prompt cache, which keeps only what
is identical from the start, must process the blocks again even when none changed. Most
turns change none of them, so the layout **anchors** them: a block whose text is the same as
in the turn before stays where it was, right after the same stored message (an ``at_depth``
block at the depth that position now has), joined with the other blocks of that place in
the same order, so the message reads exactly as before. Only blocks that changed (or are
new) go to the marker.

**Append-only.** A block that changed, or that the turn no longer has (lore no longer
selected), would leave its place, and the prompt would break there: the server would
process again every exchange after it. So the text once placed after a stored message
**stays there** while that message holds, even when it is no longer current (*stale*): the
new version goes to the marker, labelled :data:`UPDATED` so the model reads it as the one
in force (stale versions come earlier, in the order they were current). Stale text is
bounded: at most ``stale_budget`` tokens of it (:data:`STALE_SHARE` of the prompt's budget,
counted in the window like everything else). Places are kept oldest first; the first place
whose stale text does not fit is rebuilt with only its current blocks, and so is every
place after it (the prompt breaks there anyway, so their stale text goes for free). Stale
text also goes when the prompt breaks anyway before it: all of it when the history's start
moved (a cut), from that place on when the message a placed text follows was edited, rolled
back or compacted away.

A current block that did not change stays where it is while it is at most
:data:`MAX_DEPTH` stored messages from the end (lore and state must stay close enough to
the end for the model to heed them); deeper, it is sent again at the marker, and the copy
it leaves is stale. Short blocks stay too: before append-only a block stayed only while it
outweighed the exchanges after it, since its change would break the prompt there; now its
earlier text stays instead (measured: the memory pack, shorter than a reply, was sent again
every turn). Right before the reply, at the turn before's marker, no stale text is kept:
dropping it spares the server nothing, as it reads the reply after it anew anyway. When the
window is full, the stale text goes with the history's first cut (``assembly``): the prompt
breaks at the history's start then anyway. The classic layout (no marker) is never
anchored, nor is a turn without the previous turn's anchors (the first turn, a preview).

An anchor is ``[digest of the block's text, stored messages before it, fingerprint of the
message it follows, order, the text placed]`` under the block's id, and under
``~<place>:<id>`` for stale text; the turn's prompt trace keeps them for the next turn
(``anchors``). Anchors of three items (before append-only) are read too: their text is not
known, so they are never kept stale.

Pure: plain data in, plain data out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from roleplay.prompting import trimming
from roleplay.prompting.joining import JOIN  # as the per-turn blocks are joined at the marker
from roleplay.prompting.placement import Block

MAX_DEPTH = 12  # stored messages after an anchored block before it is sent again at the marker
STALE_SHARE = 1 / 8  # of the prompt's token budget: the stale text kept at most
ID_PREFIX = "anchored:"
STALE_PREFIX = "~"  # the anchors' key of stale text: ~<place>:<block id>
UPDATED = "[Updated: this replaces the earlier version above.]"


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
    stale: int = 0  # the stale text kept, as ``measure`` counts it


@dataclass(frozen=True)
class _Placed:
    """A text the turn before placed after ``after`` stored messages."""

    id: str
    digest: str
    after: int
    mark: str
    order: int | None = None  # None (and no text): an anchor from before append-only
    text: str | None = None

    def entry(self) -> list[Any]:
        if self.text is None:
            return [self.digest, self.after, self.mark]
        return [self.digest, self.after, self.mark, self.order, self.text]


def anchor(
    blocks: Sequence[Block],
    previous: Mapping[str, Any] | None,
    history: Sequence[Mapping[str, Any]],
    *,
    kept_from: int = 0,
    then: Mapping[str, Any] | None = None,
    stale_budget: int = 0,
    measure: Callable[[str], int] = len,
) -> Anchored:
    """``blocks`` (the turn's per-turn blocks for the marker, in their order) split by
    ``previous`` (the anchors of the turn before; None: anchor nothing) against the whole
    stored ``history``, of which the prompt keeps the messages from ``kept_from`` on.
    ``then``: the player's message the marker follows this turn (the shipped layout sends
    the blocks after the input), which the next turn's history holds as its newest stored
    message: the blocks sent at the marker are then anchored after it. ``stale_budget``:
    the stale text kept at most, in what ``measure`` counts (tokens)."""
    length = len(history)
    place = length if then is None else length + 1
    end = fingerprint(history if then is None else [*history, then], place)
    placed, broken = _holding(previous, history, kept_from) if previous else ({}, None)
    current = _current(blocks, placed, history)
    # The turn before's marker is followed by its reply alone (by its input too when the
    # marker stands before it): keeping stale text there spares the server nothing.
    last = length - (1 if then is not None else 2)
    if placed and max(placed) >= last:
        broken = min(broken if broken is not None else length, max(placed))
    kept, stale = _kept_places(placed, current, broken, stale_budget, measure)
    anchors: dict[str, list[Any]] = {}
    places: dict[int, list[_Placed]] = {}
    stale_ids: set[tuple[str, str]] = set()  # (block id, digest of the text kept stale)
    for after, items in placed.items():
        for item in items:
            now = current.get(item.id)
            if now is not None and now.after == after:
                if item.id not in anchors:
                    places.setdefault(after, []).append(now)
                    anchors[item.id] = now.entry()
            elif after in kept:  # stale text that stays where it was
                places.setdefault(after, []).append(item)
                anchors[f"{STALE_PREFIX}{after}:{item.id}"] = item.entry()
                stale_ids.add((item.id, item.digest))
    fresh: list[Block] = []
    for block in blocks:
        if block.id in current:
            continue
        superseded = any(i == block.id and d != digest(block.content) for i, d in stale_ids)
        text = f"{UPDATED}\n{block.content}" if superseded else block.content
        fresh.append(replace(block, content=text))
        anchors[block.id] = [digest(block.content), place, end, block.order, text]
    anchored = [
        Block(
            id=f"{ID_PREFIX}{after}",
            position="at_depth",
            content=JOIN.join(str(item.text) for item in group),
            order=group[0].order or 0,
            depth=length - after,
            role="system",
        )
        for after, group in ((a, _ordered(g)) for a, g in sorted(places.items()))
    ]
    return Anchored(fresh, anchored, anchors, stale)


def _ordered(group: list[_Placed]) -> list[_Placed]:
    """A place's texts in the order they were joined: as placement orders blocks."""
    return sorted(group, key=lambda item: (item.order or 0, item.id))


def _holding(
    previous: Mapping[str, Any], history: Sequence[Mapping[str, Any]], kept_from: int
) -> tuple[dict[int, list[_Placed]], int | None]:
    """The texts the turn before placed whose message still holds, by place, and the place
    from which the prompt breaks anyway (None: nowhere): the history's start moved (0), or
    the earliest place whose message was edited, rolled back or trimmed away."""
    length = len(history)
    moved = trimming.KEY in previous and trimming.start_of(history, previous) != kept_from
    broken: int | None = 0 if moved else None
    placed: dict[int, list[_Placed]] = {}
    for key, value in previous.items():
        item = _parse(key, value)
        if item is None:
            continue
        if kept_from <= item.after < length and item.mark == fingerprint(history, item.after):
            placed.setdefault(item.after, []).append(item)
        else:
            broken = item.after if broken is None else min(broken, item.after)
    return placed, broken


def _parse(key: str, value: Any) -> _Placed | None:
    """An anchor as the turn before wrote it; None when it is not one (or malformed)."""
    if key == trimming.KEY or not isinstance(value, list | tuple) or len(value) not in (3, 5):
        return None
    ident = key
    if key.startswith(STALE_PREFIX):
        ident = key.partition(":")[2]
        if not ident or len(value) != 5:
            return None
    text_digest, after, mark = value[:3]
    if not isinstance(text_digest, str) or not isinstance(mark, str) or not _is_int(after):
        return None
    if len(value) == 3:
        return _Placed(ident, text_digest, after, mark)
    order, text = value[3:]
    if not _is_int(order) or not isinstance(text, str):
        return None
    return _Placed(ident, text_digest, after, mark, order, text)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _current(
    blocks: Sequence[Block], placed: Mapping[int, list[_Placed]], history: Sequence[Mapping]
) -> dict[str, _Placed]:
    """For each block that stays where it was, its text there: the newest text placed for
    its id holds its very content and is at most :data:`MAX_DEPTH` messages back."""
    newest: dict[str, _Placed] = {}
    for after in sorted(placed):
        for item in placed[after]:
            newest[item.id] = item
    out: dict[str, _Placed] = {}
    for block in blocks:
        found = newest.get(block.id)
        if found is None or found.digest != digest(block.content):
            continue
        if len(history) - found.after > MAX_DEPTH:
            continue
        text = block.content if found.text is None else found.text
        order = block.order if found.order is None else found.order
        out[block.id] = replace(found, order=order, text=text)
    return out


def _kept_places(
    placed: Mapping[int, list[_Placed]],
    current: Mapping[str, _Placed],
    broken: int | None,
    budget: int,
    measure: Callable[[str], int],
) -> tuple[set[int], int]:
    """The places whose stale text stays, oldest first while it fits ``budget``: the first
    that does not (or that the prompt breaks at anyway) is rebuilt with its current texts
    only, and so is every place after it."""
    kept: set[int] = set()
    total = 0
    for after in sorted(placed):
        if broken is not None and after >= broken:
            break
        stale = [i for i in placed[after] if getattr(current.get(i.id), "after", None) != after]
        if not stale:
            continue
        if any(i.text is None for i in stale):
            break
        cost = sum(measure(str(i.text)) for i in stale)
        if total + cost > budget:
            break
        kept.add(after)
        total += cost
    return kept, total
