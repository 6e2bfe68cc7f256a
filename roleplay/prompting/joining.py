"""After placement: the cache-aware layout's per-turn messages added at the ``turnContext``
marker, and the system messages joined (those before the history into one, the per-turn
ones into one). Pure; :mod:`roleplay.prompting.assembly` calls it for every assembly."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from roleplay.prompting.placement import Block, Placement
from roleplay.prompting.stability import HEAD_POSITIONS

JOIN = "\n\n"  # between system prompts joined into one message


class Built(Protocol):
    """What the assembly's builder made before placement."""

    sources: list[str]
    head_end: int  # messages before this index precede the history
    turn_at: int | None  # where the turnContext marker stands (None: the classic layout)
    turn_blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Late:
    """The placed messages with the per-turn ones added; their sources, the placements
    shifted to match, where the history starts and the per-turn messages' range."""

    messages: list[dict[str, Any]]
    sources: list[str]
    placements: tuple[Placement, ...]
    head_end: int
    turn: range


def with_turn_context(
    built: Built, placed: Sequence[dict[str, Any]], placements: tuple[Placement, ...]
) -> Late:
    """The per-turn blocks added at the turnContext marker: right after the message that
    precedes the marker, so before the blocks placed at that point (depth 0)."""
    messages, count = list(placed), len(placed)
    sources = placed_sources(built, placements, count)
    head_end = placed_head_end(built, placements)
    if built.turn_at is None or not built.turn_blocks:
        return Late(messages, sources, placements, head_end, range(0))
    origins = _origins(placements, count)
    at = 0 if built.turn_at == 0 else origins.index(built.turn_at - 1) + 1
    added = len(built.turn_blocks)
    messages[at:at] = [{"role": b.role, "content": b.content} for b in built.turn_blocks]
    sources[at:at] = [f"block:{b.id}" for b in built.turn_blocks]
    shifted = tuple(
        replace(pl, message_index=pl.message_index + added) if pl.message_index >= at else pl
        for pl in placements
    )
    if built.turn_at <= built.head_end:  # an operator put the marker before the history
        head_end += added
    return Late(messages, sources, shifted, head_end, range(at, at + added))


def join_system(late: Late) -> tuple[list[dict[str, Any]], list[str]]:
    """Join the system messages before the history into one, and the per-turn system
    messages at the turnContext marker into one; (messages, their sources)."""
    joined: list[dict[str, Any]] = []
    joined_sources: list[str] = []
    previous = None
    for index, message in enumerate(late.messages):
        region = "head" if index < late.head_end else "turn" if index in late.turn else None
        joins = bool(joined) and region is not None and region == previous
        joins = joins and message["role"] == joined[-1]["role"] == "system"
        previous = region
        if joins:
            content = joined[-1]["content"] + JOIN + message["content"]
            joined[-1] = {**joined[-1], "content": content}
            joined_sources[-1] = joined_sources[-1] + "+" + late.sources[index]
            continue
        joined.append(message)
        joined_sources.append(late.sources[index])
    return joined, joined_sources


def _origins(placements: tuple[Placement, ...], count: int) -> list[int | None]:
    """For every placed message, the builder's index of it (None: a block placement
    inserted)."""
    inserted = {pl.message_index for pl in placements if not pl.merged}
    origins: list[int | None] = []
    original = 0
    for index in range(count):
        if index in inserted:
            origins.append(None)
        else:
            origins.append(original)
            original += 1
    return origins


def placed_sources(built: Built, placements: tuple[Placement, ...], count: int) -> list[str]:
    """The source of every placed message: the builder's, shifted by inserted blocks."""
    inserted = {pl.message_index: f"block:{pl.block_id}" for pl in placements if not pl.merged}
    return [
        inserted[index] if origin is None else built.sources[origin]
        for index, origin in enumerate(_origins(placements, count))
    ]


def placed_head_end(built: Built, placements: tuple[Placement, ...]) -> int:
    """Where the history starts once blocks were inserted before it."""
    shift = sum(1 for pl in placements if not pl.merged and pl.position in HEAD_POSITIONS)
    return built.head_end + shift
