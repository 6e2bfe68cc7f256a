"""Which stored messages the Actor's prompt keeps when the whole history does not fit, so
that trimming breaks a model server's prompt cache seldom instead of every turn. Pure.

Dropping just enough of the oldest messages each turn (the rule of most chat front-ends)
moves the first kept message every turn once the window is full: the prompt then differs
from the turn before right after the system message, and a server that caches prompts by
their prefix (llama.cpp, vLLM, hosted APIs) processes the whole history again every turn.
With the cache-aware layout the prompt trims with slack instead:

- **Keep the start.** The turn before names its first kept message (:data:`KEY` in its
  anchors: that message's digest, the next one's and its index). While the history from
  that message on fits, the prompt starts there again, even when an older message would
  fit too: the prefix holds.
- **Cut with room.** When it does not fit (or no start is known: a first turn, a preview,
  an edit or a compaction that removed that message), the oldest messages are dropped to
  cover the excess **plus** :data:`SLACK` of the history's tokens, so the next turns fit
  without another cut. With a history read that stops at ``read_limit`` messages, a new
  start also keeps at most ``read_limit - read_limit // 5`` of them, so the start stays
  inside the read for the next turns.

The cost is context: right after a cut the model sees up to a quarter less history than
the window could hold (docs/prompt.md). The classic layout, whose per-turn blocks break the
prefix anyway, drops just enough.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

KEY = "@history"  # in the anchors; never a block id (``anchoring`` looks up block ids only)
SLACK = 0.25  # of the kept history's tokens, freed beyond the excess when a cut is made
READ_SLACK = 5  # a new start keeps at most read_limit - read_limit // READ_SLACK messages


def _digest(message: Mapping[str, Any]) -> str:
    text = f"{message.get('role')}\x00{message.get('content')}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def mark(history: Sequence[Mapping[str, Any]], start: int) -> list[Any] | None:
    """What the next turn finds this turn's first kept message by: its digest, the next
    message's ("" when none), and its index (None: nothing kept)."""
    if start >= len(history):
        return None
    after = _digest(history[start + 1]) if start + 1 < len(history) else ""
    return [_digest(history[start]), after, start]


def start_of(history: Sequence[Mapping[str, Any]], anchors: Mapping[str, Any] | None) -> int:
    """Where the turn before started the history, in this turn's ``history``: the message
    its mark names (followed by the message that followed it then), the one nearest the
    index it had (the history grows at its end; a full read moves it a little); 0 when
    none is found."""
    given = (anchors or {}).get(KEY)
    if not isinstance(given, list | tuple) or len(given) != 3:
        return 0
    first, after, index = given
    if not isinstance(index, int) or isinstance(index, bool):
        return 0
    if not isinstance(first, str) or not isinstance(after, str):
        return 0
    index = min(max(index, 0), len(history) - 1)  # the same order of nearness, from inside

    def matches(i: int) -> bool:
        if _digest(history[i]) != first:
            return False
        return not after or (i + 1 < len(history) and _digest(history[i + 1]) == after)

    # outward from the index it had, the nearer (then the older) first: a turn that finds
    # it where it was digests one or two messages, not the whole read
    for distance in range(len(history)):
        for i in (index - distance, index + distance) if distance else (index,):
            if 0 <= i < len(history) and matches(i):
                return i
    return 0


def cut(costs: Sequence[int], excess: int, *, slack: bool) -> int:
    """How many of the oldest messages (``costs``: their tokens, oldest first) to drop to
    cover ``excess`` tokens, and with ``slack`` :data:`SLACK` of their whole cost too."""
    wanted = excess + (int(SLACK * sum(costs)) if slack else 0)
    dropped = freed = 0
    while dropped < len(costs) and freed < wanted:
        freed += costs[dropped]
        dropped += 1
    return dropped


def read_cap(kept: int, read_limit: int) -> int:
    """How many more of the oldest of ``kept`` messages a new start drops so that it stays
    inside a history read of ``read_limit`` messages for the next turns (0: no limit)."""
    if read_limit <= 0 or kept < read_limit:
        return 0
    return kept - (read_limit - read_limit // READ_SLACK)
