"""What of an Actor prompt stays the same from one turn to the next: the stable prefix.

Model servers (llama.cpp's ``cache_prompt``, vLLM's prefix caching, hosted prompt caching)
skip only the part of a prompt identical to an earlier request *from its start*. So what
matters is where the first part that changes between two turns sits. A part of the prompt
(a *piece*: one prompt, block or message before the system messages are joined) is
**per turn** when:

- it is a block a capability marked ``per_turn`` (selected lore that is not constant, the
  memory pack, Agent V2's state, the story stage...), wherever it went, or a merged host
  (an outlet, the author's note) holding one;
- it moves with the end of the history: an ``at_depth`` block or preset prompt, the
  author's note in the chat, or a note sent only every n-th turn;
- its text uses a volatile macro (:data:`~roleplay.prompting.macros.VOLATILE_MACROS`:
  the clock, ``random``, ``roll``);
- it is the reply being continued (the next request holds the whole reply instead).

Everything else (the preset's prompts, the card, the persona, constant lore, the compaction
summary, the example dialogue, the opening line, the stored history and the player's input,
which the next request holds as its newest stored message) is **stable**. The
stable prefix is the run of stable pieces from the start; everything after its end is sent
again on the next turn. The cache-aware layout (the ``turnContext`` marker) moves the
per-turn blocks that asked for a place near the character after the history and the
player's message (:func:`split_turn_blocks`), so the stable prefix reaches the end of the
player's message.

Pure: plain data in, plain data out.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from roleplay.prompting.placement import Block, Placement

# Positions in the system message before the history: a per-turn block asking for one of
# them goes to the turnContext marker in the cache-aware layout. Other positions (at a
# depth, in the author's note, an outlet) are already late, or an operator's explicit
# choice, and are left as asked.
HEAD_POSITIONS = ("before_character", "after_character", "before_examples", "after_examples")
PER_TURN_SOURCES = frozenset({"continuing"})


def per_turn_ids(blocks: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The ids of the blocks their capability marked ``per_turn``."""
    return frozenset(str(b["id"]) for b in blocks if b.get("per_turn") and "id" in b)


def split_turn_blocks(
    blocks: Sequence[Block], per_turn: Collection[str], cache_aware: bool
) -> tuple[list[Block], list[Block]]:
    """(the blocks placed where they ask, the blocks for the ``turnContext`` marker). The
    latter in ascending ``order``, ties by ``id``, as placement orders blocks at one point:
    the same blocks always come out in the same order, whatever order the capabilities
    added them in."""
    if not cache_aware:
        return list(blocks), []
    late = [b for b in blocks if b.id in per_turn and b.position in HEAD_POSITIONS]
    moved = {b.id for b in late}
    return [b for b in blocks if b.id not in moved], sorted(late, key=lambda b: (b.order, b.id))


def stable_pieces(
    sources: Sequence[str],
    *,
    per_turn: Collection[str],
    depth_blocks: Collection[str],
    volatile_prompts: Collection[str],
    note_moves: bool,
    placements: Sequence[Placement],
) -> tuple[bool, ...]:
    """For each piece of the placed prompt (its source, as the assembly names it), whether
    it is stable (module docstring)."""
    hosts_per_turn = {p.message_index for p in placements if p.merged and p.block_id in per_turn}
    return tuple(
        index not in hosts_per_turn
        and _stable(source, per_turn, depth_blocks, volatile_prompts, note_moves)
        for index, source in enumerate(sources)
    )


def _stable(
    source: str,
    per_turn: Collection[str],
    depth_blocks: Collection[str],
    volatile_prompts: Collection[str],
    note_moves: bool,
) -> bool:
    kind, _, name = source.partition(":")
    if source in PER_TURN_SOURCES:
        return False
    if source == "author_note":
        return not note_moves and "authorNote" not in volatile_prompts
    if source == "greeting":
        return source not in volatile_prompts
    if kind == "prompt":
        return name not in volatile_prompts
    if kind == "block":
        return name not in per_turn and name not in depth_blocks
    return True  # the opening line and the stored history


def prefix_length(stable: Sequence[bool]) -> int:
    """How many pieces from the start are stable."""
    return next((i for i, ok in enumerate(stable) if not ok), len(stable))
