"""The world's mechanics when prose is accepted (one round), and what surfaces in a turn.
Deterministic: the only randomness is the snapshot's own dice, each undercurrent below stage
3 draws exactly once per round, and surfacing draws nothing.

- The foreground goes ``start`` → ``develop`` → … → ``end`` after ``developMax`` develop
  rounds; at ``end`` it waits for a legal successor (``pendingNextForeground``).
- Each background's countdown drops by one; at zero it acts by the foreground's phase: at
  ``start`` it is delayed a round, in ``develop`` it obstructs the scene (an injection), at
  ``end`` it takes the scene over (it becomes the next foreground, if none is waiting).
- Each undercurrent below stage 3 rolls a d100 against its stage's threshold and advances on
  a hit, or after ``maxStageRounds`` rounds in a stage; reaching stage 3 makes it the
  pending invitation (``pendingSignalDemand``). While an invitation is undelivered, no
  undercurrent moves.
- Undercurrents are refilled from the seed queue up to ``minUndercurrents``, never invented.
"""

from __future__ import annotations

import copy

from .ids import id_order
from .policy import WorldPolicy
from .world import Background, Foreground, Undercurrent, World, validate

# d100 at or under this advances an undercurrent out of stage 1 and stage 2.
THRESHOLDS = {1: 35, 2: 25}


def accept_round(world: World, policy: WorldPolicy) -> tuple[World, list[dict]]:
    """A new world one round on, and what happened (events); ``world`` is not changed."""
    world = copy.deepcopy(world)
    events: list[dict] = []
    phase = world.foreground.phase
    world.round += 1
    _foreground(world, policy, events)
    _backgrounds(world, phase, events)
    _undercurrents(world, policy, events)
    _refill(world, policy, events)
    validate(world, policy)
    return world, events


def _foreground(world: World, policy: WorldPolicy, events: list[dict]) -> None:
    fg = world.foreground
    if fg.phase == "start":
        fg.phase = "develop" if policy.developMax > 0 else "end"
        fg.developRounds = 1 if policy.developMax > 0 else 0
    elif fg.phase == "develop":
        if fg.developRounds >= policy.developMax:
            fg.phase = "end"
        else:
            fg.developRounds += 1
    elif world.pendingNextForeground is not None:
        nxt = world.pendingNextForeground
        events.append({"type": "foreground_ended", "id": fg.id})
        world.foreground = Foreground(id=nxt["id"], title=nxt["title"])
        world.pendingNextForeground = None
        events.append({"type": "foreground_started", "id": nxt["id"]})
    else:
        events.append({"type": "foreground_awaiting_successor", "id": fg.id})


def _backgrounds(world: World, phase: str, events: list[dict]) -> None:
    kept: list[Background] = []
    for bg in world.backgrounds:
        bg.countdown = max(bg.countdown - 1, 0)
        if bg.countdown > 0:
            kept.append(bg)
        elif phase == "develop":
            world.pendingInjections.append({"kind": "obstacle", "id": bg.id, "title": bg.title})
            events.append({"type": "background_obstructs", "id": bg.id})
        elif phase == "end" and world.pendingNextForeground is None:
            world.pendingNextForeground = {"id": bg.id, "title": bg.title}
            events.append({"type": "background_takes_over", "id": bg.id})
        else:
            bg.countdown = 1
            kept.append(bg)
            events.append({"type": "background_delayed", "id": bg.id})
    world.backgrounds = kept


def _undercurrents(world: World, policy: WorldPolicy, events: list[dict]) -> None:
    if world.pendingSignalDemand is not None:
        events.append({"type": "undercurrents_paused", "by": world.pendingSignalDemand["id"]})
        return
    for uc in world.undercurrents:
        if uc.stage >= 3:
            continue
        uc.stageRounds += 1
        roll = world.rng.d100()
        if world.pendingSignalDemand is not None:
            continue  # the dice were drawn (a fixed count); a new invitation holds the rest
        if roll <= THRESHOLDS[uc.stage] or uc.stageRounds >= policy.maxStageRounds:
            uc.stage, uc.stageRounds = uc.stage + 1, 0
            events.append({"type": "undercurrent_advanced", "id": uc.id, "stage": uc.stage})
            if uc.stage == 3:
                world.pendingSignalDemand = {"id": uc.id, "title": uc.title}


def _refill(world: World, policy: WorldPolicy, events: list[dict]) -> None:
    while len(world.undercurrents) < policy.minUndercurrents and world.seedQueue:
        seed = world.seedQueue.pop(0)
        world.undercurrents.append(Undercurrent(id=seed.id, title=seed.title, owner=seed.owner))
        events.append({"type": "seed_planted", "id": seed.id})


def deliver_signal(world: World, policy: WorldPolicy) -> World:
    """Settlement confirmed that the pending invitation reached the user: it becomes an
    injection the scene may take up (the user may still refuse), and its undercurrent is
    spent."""
    demand = world.pendingSignalDemand
    if demand is None:
        return world
    world = copy.deepcopy(world)
    world.pendingSignalDemand = None
    world.undercurrents = [u for u in world.undercurrents if u.id != demand["id"]]
    world.pendingInjections.append({"kind": "invitation", **demand})
    validate(world, policy)
    return world


def surface(world: World, policy: WorldPolicy) -> list[str]:
    """The undercurrents the Actor may hint at this turn: at most ``surfaceBudget``, the
    pending invitation's first, then by stage and time in it. Draws no dice."""
    demand = (world.pendingSignalDemand or {}).get("id")
    ranked = sorted(
        world.undercurrents,
        key=lambda u: (u.id != demand, -u.stage, -u.stageRounds, id_order(u.id)),
    )
    return [u.id for u in ranked[: policy.surfaceBudget]]
