"""Story's world, pure: the snapshot's capacities and rules (protected owners, phases, ids),
its JSON round trip, and one round of mechanics (phases, countdowns by phase, dice, the
invitation that pauses the undercurrents, refill from seeds only), deterministic under a
seed and never changing the world it was given."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from story.engine.mechanics import THRESHOLDS, accept_round, deliver_signal, surface
from story.engine.policy import WorldPolicy
from story.engine.rng import Rng
from story.engine.world import (
    Background,
    Foreground,
    Seed,
    Undercurrent,
    World,
    WorldInvalid,
    validate,
)

POLICY = WorldPolicy()


def make_world(seed=731, backgrounds=(), undercurrents=(), seeds=(), phase="start", **extra):
    return World(
        foreground=Foreground("w1", "Lia checks the copper key", phase=phase),
        backgrounds=[Background(f"b{i}", t, "patrol", c) for i, (t, c) in enumerate(backgrounds)],
        undercurrents=[Undercurrent(f"u{i}", t, "guild") for i, t in enumerate(undercurrents)],
        seedQueue=[Seed(f"s{i}", t, "caravan") for i, t in enumerate(seeds)],
        protectedOwners=["Lia"],
        rng=Rng.seeded(seed),
        **extra,
    )


worlds = st.builds(
    make_world,
    seed=st.integers(0, 2**32 - 1),
    backgrounds=st.lists(st.tuples(st.text(min_size=1, max_size=8), st.integers(0, 4)), max_size=3),
    undercurrents=st.lists(st.text(min_size=1, max_size=8), max_size=5),
    seeds=st.lists(st.text(min_size=1, max_size=8), max_size=4),
    phase=st.sampled_from(["start", "develop", "end"]),
)


@given(worlds, st.integers(1, 15))
def test_rounds_keep_every_capacity_and_are_deterministic(world, rounds):
    validate(world, POLICY)
    before = json.dumps(world.as_json(), sort_keys=True)
    a, b = world, World.from_json(json.loads(before))
    for _ in range(rounds):
        a, _events = accept_round(a, POLICY)
        b, _events = accept_round(b, POLICY)
        validate(a, POLICY)
        assert len(a.backgrounds) <= 3 and len(a.undercurrents) <= 5
        assert sum(1 for u in a.undercurrents if u.stage == 3) <= 1 + (
            a.pendingSignalDemand is None
        )
    assert json.dumps(a.as_json(), sort_keys=True) == json.dumps(b.as_json(), sort_keys=True)
    assert json.dumps(world.as_json(), sort_keys=True) == before  # the given world is untouched
    assert a.round == world.round + rounds


@given(worlds)
def test_a_round_draws_once_per_undercurrent_below_stage_three(world):
    moving = sum(1 for u in world.undercurrents if u.stage < 3)
    after, _ = accept_round(world, POLICY)
    assert after.rng.draws - world.rng.draws == moving


@given(worlds)
def test_surfacing_draws_nothing_and_stays_in_budget(world):
    chosen = surface(world, POLICY)
    assert len(chosen) <= POLICY.surfaceBudget
    assert world.rng.draws == 0


def test_the_foreground_develops_developmax_rounds_then_ends_and_waits():
    world = make_world()
    phases = []
    for _ in range(5):
        world, events = accept_round(world, POLICY)
        phases.append((world.foreground.phase, world.foreground.developRounds))
    assert phases == [("develop", 1), ("develop", 2), ("end", 2), ("end", 2), ("end", 2)]
    assert events == [{"type": "foreground_awaiting_successor", "id": "w1"}]
    world.pendingNextForeground = {"id": "w9", "title": "the archive"}
    world, events = accept_round(world, POLICY)
    assert world.foreground == Foreground("w9", "the archive")
    assert {"type": "foreground_ended", "id": "w1"} in events


@pytest.mark.parametrize(
    ("phase", "expect"),
    [
        ("start", "background_delayed"),
        ("develop", "background_obstructs"),
        ("end", "background_takes_over"),
    ],
)
def test_an_expired_background_acts_by_the_foregrounds_phase(phase, expect):
    world = make_world(backgrounds=[("the patrol returns", 1)], phase=phase)
    after, events = accept_round(world, POLICY)
    assert {"type": expect, "id": "b0"} in events
    if expect == "background_delayed":
        assert after.backgrounds[0].countdown == 1
    elif expect == "background_obstructs":
        assert after.pendingInjections == [
            {"kind": "obstacle", "id": "b0", "title": "the patrol returns"}
        ]
        assert after.backgrounds == []
    else:
        assert after.pendingNextForeground == {"id": "b0", "title": "the patrol returns"}


def test_an_undercurrent_is_forced_on_after_max_stage_rounds_and_its_invitation_pauses_the_rest():
    world = make_world(undercurrents=["the guild hunts the key", "rumours"])
    world.undercurrents[0].stage, world.undercurrents[0].stageRounds = 2, 5
    world.undercurrents[1].stageRounds = 0
    # find a seed whose first roll misses stage 2's threshold: the advance is then forced
    seed = next(s for s in range(1000) if Rng.seeded(s).d100() > THRESHOLDS[2])
    world.rng = Rng.seeded(seed)
    after, events = accept_round(world, POLICY)
    assert after.undercurrents[0].stage == 3
    assert after.pendingSignalDemand == {"id": "u0", "title": "the guild hunts the key"}
    assert {"type": "undercurrent_advanced", "id": "u0", "stage": 3} in events
    frozen = [(u.stage, u.stageRounds) for u in after.undercurrents]
    later, events = accept_round(after, POLICY)
    assert [(u.stage, u.stageRounds) for u in later.undercurrents] == frozen
    assert {"type": "undercurrents_paused", "by": "u0"} in events
    assert surface(later, POLICY)[0] == "u0"
    delivered = deliver_signal(later, POLICY)
    assert delivered.pendingSignalDemand is None
    assert [u.id for u in delivered.undercurrents] == ["u1"]
    assert delivered.pendingInjections[-1]["kind"] == "invitation"


def test_undercurrents_are_refilled_from_seeds_only():
    world, events = accept_round(make_world(seeds=["a caravan's message"]), POLICY)
    assert [u.title for u in world.undercurrents] == ["a caravan's message"]
    assert world.seedQueue == []
    world, _ = accept_round(world, POLICY)
    assert len(world.undercurrents) == 1  # below the target of 2, nothing invented


@pytest.mark.parametrize(
    "breakage",
    [
        lambda w: w.undercurrents.append(Undercurrent("u9", "Lia's secret", " lia ")),
        lambda w: w.seedQueue.append(Seed("s9", "Lia leaves", "LIA")),
        lambda w: w.backgrounds.extend(Background(f"b{i}", "x", "y", 2) for i in range(4)),
        lambda w: w.undercurrents.extend(Undercurrent(f"u{i}", "x", "y") for i in range(6)),
        lambda w: setattr(w.foreground, "phase", "climax"),
        lambda w: setattr(w.foreground, "developRounds", 3),
        lambda w: w.backgrounds.append(Background("w1", "same id", "x", 1)),
        lambda w: w.backgrounds.append(Background("b1", "x", "y", -1)),
        lambda w: w.undercurrents.append(Undercurrent("u1", "x", "y", stage=4)),
    ],
)
def test_broken_worlds_are_refused(breakage):
    world = make_world()
    breakage(world)
    with pytest.raises(WorldInvalid):
        validate(world, POLICY)


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"foreground": {}},
        {"foreground": {"id": "w1"}, "rng": {}},
        {"foreground": {"id": "w1", "title": "t"}, "rng": {"state": "x"}},
    ],
)
def test_malformed_snapshots_are_refused(data):
    with pytest.raises(WorldInvalid):
        World.from_json(data)
