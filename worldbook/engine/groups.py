"""Inclusion groups (SillyTavern semantics): among activated entries of a group, keep one.

Groups let an author write alternatives ("weather: rain", "weather: fog") and have exactly one
read per turn. Resolution for each group, in name order, over members still active:

1. if any member is in its sticky period, the sticky members stay and the rest lose;
2. members using group scoring lose when they matched fewer keys than the best member;
3. if any remaining member has ``group_override``, the one with the highest ``order`` wins;
4. otherwise one is drawn with probability proportional to ``group_weight``, from a hash of
   the request seed and the group name, so the same request draws the same winner.

Required and constant entries take part like any other (an author who puts a required entry
into a group asked for it to compete).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

from worldbook.engine.entry import Entry

GROUP_LOST = "group_lost"

Slot = TypeVar("Slot", bound=Hashable)


@dataclass(slots=True)
class Member:
    """What group resolution needs to know about one activated entry."""

    entry: Entry
    stable_id: tuple[str, str]
    score: int
    sticky: bool


def weighted_draw(seed: str, group: str, weights: list[int]) -> int:
    """Index chosen with probability weight/total, deterministic in (seed, group)."""
    total = sum(weights)
    digest = hashlib.sha256(f"{seed}\x1fgroup\x1f{group}".encode()).digest()
    point = int.from_bytes(digest[:8], "big") * total >> 64
    for index, weight in enumerate(weights):
        if point < weight:
            return index
        point -= weight
    return len(weights) - 1


def resolve_groups(
    members: dict[Slot, Member],
    seed: str,
    default_scoring: bool,
    label: Callable[[Slot], str],
) -> dict[Slot, dict[str, str]]:
    """Losers of every inclusion group, each with ``{"group": name, "winner": label}``."""
    by_group: dict[str, list[Slot]] = {}
    for slot, member in members.items():
        for name in member.entry.group_names:
            by_group.setdefault(name, []).append(slot)
    removed: dict[Slot, dict[str, str]] = {}
    for name in sorted(by_group):
        alive = sorted(
            (slot for slot in by_group[name] if slot not in removed),
            key=lambda slot: members[slot].stable_id,
        )
        if len(alive) < 2:
            continue
        keep = _winners(name, alive, members, seed, default_scoring)
        winner = label(keep[0])
        for slot in alive:
            if slot not in keep:
                removed[slot] = {"group": name, "winner": winner}
    return removed


def _winners(
    name: str,
    alive: list[Slot],
    members: dict[Slot, Member],
    seed: str,
    default_scoring: bool,
) -> list[Slot]:
    sticky = [slot for slot in alive if members[slot].sticky]
    if sticky:
        return sticky
    best = max(members[slot].score for slot in alive)
    if best > 0:
        alive = [
            slot
            for slot in alive
            if members[slot].score >= best or not _scored(members[slot].entry, default_scoring)
        ]
    override = [slot for slot in alive if members[slot].entry.group_override]
    if override:
        # Highest order wins; ties go to the smallest stable id (``alive`` is sorted by it).
        top = max(members[slot].entry.order for slot in override)
        return [next(slot for slot in override if members[slot].entry.order == top)]
    weights = [members[slot].entry.group_weight for slot in alive]
    return [alive[weighted_draw(seed, name, weights)]]


def _scored(entry: Entry, default_scoring: bool) -> bool:
    return default_scoring if entry.use_group_scoring is None else entry.use_group_scoring
