"""The positions a preset's layout offers a turn (``assembly.capabilities``), remembered.

Knowing them costs a whole pass over the preset (every prompt's macros expanded), and every
turn that places a block or selects lore asks before its prompt is assembled, so on the path
to the first delta. What they depend on is small and rarely changes: the preset, the card,
the persona, the chat variables and whether the author's note is sent this turn (the
history and the player's input never decide them: the pass leaves them out). So the answer
is kept per preset object (a new preset version is a new object, and its answers go with
it) under the key of those inputs, unless a volatile macro (``time``, ``random``…) may
decide whether a prompt is sent at all: one whose text is nothing but macros may come out
blank one turn and not the next, and a blank prompt is left out, so the positions are
computed every turn. A volatile macro beside other text (``It is {{time}}.``) changes the
prompt's words, never whether it is there, and the answer is kept. Pure.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable

# Answers kept per preset: distinct (card, persona, variables, note) combinations seen.
PER_PRESET = 512

_KEPT: dict[int, dict[Hashable, tuple[str, ...]]] = {}
_WRITING = threading.Lock()  # the turns' database threads share it


def remembered(
    preset: object, key: Hashable, compute: Callable[[], tuple[tuple[str, ...], bool]]
) -> tuple[str, ...]:
    """``compute()``'s positions for ``preset`` under ``key``, kept when it says they may
    be (``(positions, keep)``)."""
    found = _KEPT.get(id(preset), {}).get(key)
    if found is not None:
        return found
    positions, keep = compute()
    if not keep:
        return positions
    with _WRITING:
        kept = _KEPT.get(id(preset))
        if kept is None:
            kept = _KEPT[id(preset)] = {}
            weakref.finalize(preset, _KEPT.pop, id(preset), None)
        if len(kept) >= PER_PRESET:
            kept.pop(next(iter(kept)))  # the oldest goes first
        kept[key] = positions
    return positions


def forget() -> None:
    """Drop every kept answer (tests)."""
    _KEPT.clear()
