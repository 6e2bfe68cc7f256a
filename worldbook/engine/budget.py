"""Steps 3 and 4 of selection: dependency groups, conflicts, then the token and entry budgets.

An activated entry travels with everything it ``requires`` (transitively, same revision): the
author said it makes no sense alone, so the group is taken whole or dropped whole, never cut
down to a summary. Groups are considered in one order (required, then constant, then the
rest; within a class priority, the book's scope tier, keyword hit, hybrid score, order,
stable id) for both conflict
resolution and budgeting, so the better-ranked entry always wins a tie-break.

Required entries are never dropped quietly: when one cannot be honoured the selection fails
with a :class:`SelectionError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from worldbook.engine.activation import PLAIN_CONSTANT, Activation, Slot
from worldbook.engine.entry import Entry
from worldbook.engine.errors import (
    DEPENDENCY_BROKEN,
    REQUIRED_CONFLICT,
    REQUIRED_OVER_BUDGET,
    SelectionError,
)
from worldbook.engine.matcher import CompiledBook

DEPENDENCY_UNAVAILABLE = "dependency_unavailable"
CONFLICT_DROPPED = "conflict_dropped"
CONSTANT_BUDGET_DROPPED = "constant_budget_dropped"
BUDGET_DROPPED = "budget_dropped"
MAX_ENTRIES_DROPPED = "max_entries_dropped"

REQUIRED_CLASS, CONSTANT_CLASS, OTHER_CLASS = 0, 1, 2


@dataclass(slots=True)
class Group:
    """An activated root entry plus its ``requires`` closure (root first)."""

    root: Slot
    members: list[Slot]
    rank: int
    sort_key: tuple[Any, ...]
    # The members this group added when taken (a sequence, replaced, never grown).
    new_members: Sequence[Slot] = ()


@dataclass(slots=True)
class Drop:
    reason: str
    details: dict[str, Any]


@dataclass(slots=True)
class BudgetInput:
    books: list[CompiledBook]
    active: dict[Slot, Activation]
    verdict_reasons: list[list[str | None]]  # None = eligible
    label: Callable[[Slot], str]  # "book_id:entry_id" for messages
    cost: Callable[[Slot], int]  # tokens of the wrapped block, joiner included
    base_cost: int  # tokens of the empty wrapper
    token_budget: int
    constant_ratio: float
    max_entries: int
    # Per book, its plain constants in rank order (``plain_constants``, kept per revision).
    plain: Sequence[Sequence[tuple[tuple[Any, ...], int]]] = ()
    # Per book, its scope tier (``engine.scopes``); empty: every book at tier 0.
    tiers: Sequence[int] = ()


def is_plain(entry: Entry) -> bool:
    """A constant that stands alone: not required, in no inclusion group, needing no other
    entry and claiming no conflict key. Active as :data:`PLAIN_CONSTANT`, it is a group of
    one that never conflicts, and its rank key is fixed for the revision."""
    return (
        entry.constant
        and not entry.required
        and not entry.group
        and not entry.requires
        and entry.conflict_key is None
    )


def rank_key(
    entry: Entry, act: Activation, book_id: str, entry_id: str, tier: int = 0
) -> tuple[Any, ...]:
    """The order groups are considered in (root entry's key): see the module docstring.
    ``tier`` is the book's scope tier (``engine.scopes``), 0 for every book of one scope."""
    return (
        REQUIRED_CLASS if entry.required else CONSTANT_CLASS if entry.constant else OTHER_CLASS,
        not entry.required,
        -entry.priority,
        tier,
        not act.keyword_hit,
        -(act.hybrid_score or 0.0),
        -entry.order,
        book_id,
        entry_id,
    )


def plain_constants(
    book_id: str, ids: Sequence[str], entries: Sequence[Entry]
) -> list[tuple[tuple[Any, ...], int]]:
    """(rank key, entry index) of a revision's plain constants, in rank order."""
    return sorted(
        (rank_key(entry, PLAIN_CONSTANT, book_id, ids[i]), i)
        for i, entry in enumerate(entries)
        if is_plain(entry)
    )


def allocate(inp: BudgetInput, drops: dict[Slot, Drop]) -> list[Group]:
    """Steps 3 and 4: dependency groups, conflicts, then the budgets; the groups taken.

    Plain constants active for being constant alone (most of the active entries over many
    books) skip the first two: their groups of one come, already in rank order, from the
    revisions' ``plain`` lists and join the others in the budget's walk."""
    quiet = [
        [
            (_at_tier(key, _tier(inp, b)), (b, i))
            for key, i in plain
            if inp.active.get((b, i)) is PLAIN_CONSTANT
        ]
        for b, plain in enumerate(inp.plain)
    ]
    skip = {slot for stream in quiet for _key, slot in stream}
    groups = resolve_conflicts(inp, build_groups(inp, drops, skip), drops)
    return fit_budget(inp, _in_rank_order(groups, quiet), drops)


def _tier(inp: BudgetInput, book: int) -> int:
    return inp.tiers[book] if inp.tiers else 0


def _at_tier(key: tuple[Any, ...], tier: int) -> tuple[Any, ...]:
    """A revision's cached rank key (made at tier 0) at the book's tier this selection."""
    return key if tier == 0 else (*key[:TIER_AT], tier, *key[TIER_AT + 1 :])


TIER_AT = 3  # where rank_key puts the tier


# An item of the budget's walk: a group, or a quiet constant as (its rank key, its slot).
Item = Group | tuple[tuple[Any, ...], Slot]


def _in_rank_order(
    groups: list[Group], quiet: list[list[tuple[tuple[Any, ...], Slot]]]
) -> list[Item]:
    """The sorted groups and the quiet constants, merged (keys are unique: they end with the
    root's book and entry ids, so two items never tie). One C-level sort of the already
    sorted runs merges them several times faster than ``heapq.merge``. A quiet constant
    stays a (key, slot) pair: most of them are dropped, and a group is made only for those
    taken."""
    ranked: list[tuple[tuple[Any, ...], Group | Slot]] = sorted(
        chain(((group.sort_key, group) for group in groups), *quiet)
    )
    return [item if isinstance(item, Group) else (key, item) for key, item in ranked]


def build_groups(
    inp: BudgetInput, drops: dict[Slot, Drop], skip: set[Slot] | frozenset[Slot] = frozenset()
) -> list[Group]:
    """Dependency closure of every active entry but ``skip``, in rank order; broken groups
    are dropped or raise."""
    groups: list[Group] = []
    for root, act in inp.active.items():
        if root in skip:
            continue
        book = inp.books[root[0]]
        entry = book.entries[root[1]]
        members, broken = _closure(inp, root)
        if broken is not None:
            dep_id, dep_reason = broken
            details = {"dependency": dep_id, "dependency_reason": dep_reason}
            if entry.required:
                raise SelectionError(
                    DEPENDENCY_BROKEN,
                    f"required entry {inp.label(root)} needs {dep_id}, which is unavailable "
                    f"({dep_reason})",
                    {"book_id": book.book_id, "entry_id": book.ids[root[1]], **details},
                )
            drops[root] = Drop(DEPENDENCY_UNAVAILABLE, details)
            continue
        sort_key = rank_key(entry, act, book.book_id, book.ids[root[1]], _tier(inp, root[0]))
        groups.append(Group(root, members, sort_key[0], sort_key))
    groups.sort(key=lambda g: g.sort_key)
    return groups


def _closure(inp: BudgetInput, root: Slot) -> tuple[list[Slot], tuple[str, str] | None]:
    b = root[0]
    book = inp.books[b]
    if not book.entries[root[1]].requires:  # most entries: a group of one
        return [root], None
    members = [root]
    seen = {root[1]}
    queue = [root[1]]
    while queue:
        current = book.entries[queue.pop(0)]
        for dep_id in current.requires:
            i = book.index.get(dep_id)
            if i is None:
                return members, (dep_id, "missing")
            if i in seen:
                continue
            reason = inp.verdict_reasons[b][i]
            if reason is not None:
                return members, (dep_id, reason)
            seen.add(i)
            members.append((b, i))
            queue.append(i)
    return members, None


def resolve_conflicts(
    inp: BudgetInput, groups: list[Group], drops: dict[Slot, Drop]
) -> list[Group]:
    """Keep the first-ranked holder of each ``conflict_key``; later groups using it drop."""
    claimed: dict[str, Slot] = {}
    survivors: list[Group] = []
    for group in groups:
        clash: tuple[str, Slot] | None = None
        local: dict[str, Slot] = {}
        for slot in group.members:
            key = inp.books[slot[0]].entries[slot[1]].conflict_key
            if key is None:
                continue
            holder = claimed.get(key, local.get(key))
            if holder is not None and holder != slot:
                clash = (key, holder)
                break
            local[key] = slot
        if clash is None:
            claimed.update(local)
            survivors.append(group)
            continue
        key, holder = clash
        details = {"conflict_key": key, "winner": inp.label(holder)}
        if group.rank == REQUIRED_CLASS:
            raise SelectionError(
                REQUIRED_CONFLICT,
                f"required entry {inp.label(group.root)} conflicts with {inp.label(holder)} "
                f"on conflict_key {key!r}",
                {"conflict_key": key, "entries": [inp.label(group.root), inp.label(holder)]},
            )
        drops[group.root] = Drop(CONFLICT_DROPPED, details)
    return survivors


def fit_budget(inp: BudgetInput, items: Iterable[Item], drops: dict[Slot, Drop]) -> list[Group]:
    """Greedy, whole groups, in rank order. Returns the groups taken, in take order."""
    taken_slots: set[Slot] = set()
    taken: list[Group] = []
    used = inp.base_cost
    constant_used = 0
    constant_cap = math.floor(inp.constant_ratio * inp.token_budget + 1e-9)
    token_budget, max_entries = inp.token_budget, inp.max_entries
    for item in items:
        if not isinstance(item, Group):  # a quiet constant: a group of one, never required
            key, slot = item
            if slot in taken_slots:
                taken.append(Group(slot, [slot], CONSTANT_CLASS, key))
            elif len(taken_slots) + 1 > max_entries:
                drops[slot] = Drop(MAX_ENTRIES_DROPPED, {"max_entries": max_entries})
            elif used >= token_budget:
                drops[slot] = Drop(BUDGET_DROPPED, {"used": used, "token_budget": token_budget})
            else:
                cost = inp.cost(slot)
                if used + cost > token_budget:
                    drops[slot] = Drop(
                        BUDGET_DROPPED, {"cost": cost, "used": used, "token_budget": token_budget}
                    )
                elif constant_used + cost > constant_cap:
                    drops[slot] = Drop(
                        CONSTANT_BUDGET_DROPPED,
                        {
                            "cost": cost,
                            "constant_used": constant_used,
                            "constant_cap": constant_cap,
                        },
                    )
                else:
                    used += cost
                    constant_used += cost
                    taken_slots.add(slot)
                    taken.append(Group(slot, [slot], CONSTANT_CLASS, key, [slot]))
            continue
        group = item
        members = group.members
        if len(members) == 1:  # most groups: no list to build
            new = members if members[0] not in taken_slots else []
        else:
            new = [slot for slot in members if slot not in taken_slots]
        if not new:
            taken.append(group)
            continue
        required = group.rank == REQUIRED_CLASS
        if len(taken_slots) + len(new) > max_entries:
            if required:
                raise _over_budget(inp, group, "max_entries", max_entries)
            _drop(inp, group, new, drops, MAX_ENTRIES_DROPPED, {"max_entries": max_entries})
            continue
        if used >= token_budget and not required:
            # Nothing more can fit; skip tokenizing what would be dropped anyway.
            _drop(
                inp, group, new, drops, BUDGET_DROPPED, {"used": used, "token_budget": token_budget}
            )
            continue
        cost = inp.cost(new[0]) if len(new) == 1 else sum(inp.cost(slot) for slot in new)
        if used + cost > token_budget:
            if required:
                raise _over_budget(inp, group, "token_budget", token_budget)
            _drop(
                inp,
                group,
                new,
                drops,
                BUDGET_DROPPED,
                {"cost": cost, "used": used, "token_budget": token_budget},
            )
            continue
        if group.rank == CONSTANT_CLASS and constant_used + cost > constant_cap:
            _drop(
                inp,
                group,
                new,
                drops,
                CONSTANT_BUDGET_DROPPED,
                {"cost": cost, "constant_used": constant_used, "constant_cap": constant_cap},
            )
            continue
        used += cost
        if group.rank == CONSTANT_CLASS:
            constant_used += cost
        group.new_members = new
        taken_slots.update(new)
        taken.append(group)
    return taken


def _drop(
    inp: BudgetInput,
    group: Group,
    new: Sequence[Slot],
    drops: dict[Slot, Drop],
    reason: str,
    details: dict[str, Any],
) -> None:
    drops[group.root] = Drop(reason, details)
    if len(new) == 1 and new[0] == group.root:  # most drops: a group of one
        return
    for slot in new[1:] if new and new[0] == group.root else new:
        if slot not in inp.active and slot not in drops:
            drops[slot] = Drop(reason, {**details, "as_dependency_of": inp.label(group.root)})


def _over_budget(inp: BudgetInput, group: Group, limit: str, value: int) -> SelectionError:
    return SelectionError(
        REQUIRED_OVER_BUDGET,
        f"required entry {inp.label(group.root)} (with its dependencies) does not fit {limit}",
        {"entry": inp.label(group.root), "limit": limit, "value": value},
    )


def trim_to_actual(
    inp: BudgetInput,
    taken: list[Group],
    drops: dict[Slot, Drop],
    measure: Callable[[list[Group]], int],
) -> list[Group]:
    """Estimated costs are per block; the joined text can tokenize differently. Drop the
    last-taken optional groups until the real count fits (required ones raise).

    A group that reused members of a dropped group is dropped with it, so a group is never
    left without one of its dependencies.
    """
    while taken and (actual := measure(taken)) > inp.token_budget:
        index = max(
            (n for n, g in enumerate(taken) if g.new_members and g.rank != REQUIRED_CLASS),
            default=None,
        )
        if index is None:
            raise _over_budget(inp, taken[-1], "token_budget", inp.token_budget)
        gone: set[Slot] = set()
        doomed = [taken[index]]
        while doomed:
            group = doomed.pop()
            if group not in taken:
                continue
            taken.remove(group)
            if group.new_members:
                _drop(
                    inp, group, group.new_members, drops, BUDGET_DROPPED, {"actual_tokens": actual}
                )
            else:
                drops.setdefault(group.root, Drop(BUDGET_DROPPED, {"actual_tokens": actual}))
            gone.update(group.new_members)
            group.new_members = []
            doomed.extend(g for g in taken if gone.intersection(g.members))
    return taken
