"""Accepting prose into the world, pure: what a world model may propose (delivery of the
pending invitation, consequences, resolved injections, the next scene among legal
candidates, seeds, choices) and what it never may (clocks, ids, stages, capacities, a
protected character hidden), with a duplicate turn ignored."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from story.engine.advance import ProposalInvalid, advance
from story.engine.policy import WorldPolicy
from story.engine.rng import Rng
from story.engine.world import Background, Foreground, Undercurrent, World

WP = WorldPolicy()


def world():
    return World(
        foreground=Foreground("w1", "Lia checks the copper key", phase="develop", developRounds=1),
        backgrounds=[Background("w2", "the patrol returns", "patrol", 3)],
        undercurrents=[Undercurrent("w3", "a courier is coming", "guild", stage=3)],
        pendingSignalDemand={"id": "w3", "title": "a courier is coming"},
        pendingInjections=[{"kind": "obstacle", "id": "w4", "title": "the gate is barred"}],
        protectedOwners=["Lia"],
        nextId=10,
        rng=Rng.seeded(5),
    )


def test_a_proposal_applied_then_one_round_of_mechanics():
    result = advance(
        world(),
        "t1",
        [],
        {
            "delivered": True,
            "resolved": ["w4"],
            "consequences": ["Lia keeps the key overnight"],
            "nextForeground": "w2",
            "seeds": [{"title": "a caravan's message", "owner": "caravan"}],
            "choices": [
                {"text": "I wait.", "expect": "waiting"},
                {"text": "I follow the courier.", "isSignal": True},
            ],
        },
        WP,
    )
    w = result.world
    assert result.outcome == "committed" and w.round == 1
    assert (
        w.pendingSignalDemand is None and w.undercurrents[0].id == "w11"
    )  # refilled from the seed
    kinds = [(i["kind"], i["title"]) for i in w.pendingInjections]
    assert ("invitation", "a courier is coming") in kinds
    assert ("consequence", "Lia keeps the key overnight") in kinds
    assert all(i["id"] != "w4" for i in w.pendingInjections)
    assert w.pendingNextForeground == {"id": "w2", "title": "the patrol returns"}
    assert w.backgrounds == []
    assert [c.isSignal for c in w.choices] == [False, True]
    assert w.foreground.developRounds == 2


def test_a_turn_accepted_twice_is_a_duplicate():
    w = world()
    assert advance(w, "t1", ["t1"], {"delivered": True}, WP).outcome == "duplicate"
    assert w.pendingSignalDemand is not None


@pytest.mark.parametrize(
    "proposal",
    [
        {"round": 9},
        {"foreground": {"phase": "end"}},
        {"undercurrents": []},
        {"delivered": "yes"},
        {"resolved": ["w99"]},
        {"resolved": "w4"},
        {"consequences": [""]},
        {"consequences": ["x"] * 6},
        {"nextForeground": "somewhere new"},
        {"nextForeground": "w3"},  # an undercurrent is not a scene yet
        {"seeds": [{"title": "Lia betrays you", "owner": " LIA "}]},
        {"seeds": [{"title": "x", "owner": "y", "id": "w1"}]},
        {"seeds": [{"title": "", "owner": "y"}]},
        {"choices": [{"text": "x", "index": 3}]},
        {"choices": [{"text": " "}]},
        [],
        "text",
    ],
)
def test_a_proposal_outside_its_rights_is_refused_and_changes_nothing(proposal):
    w = world()
    before = json.dumps(w.as_json(), sort_keys=True)
    with pytest.raises(ProposalInvalid):
        advance(w, "t1", [], proposal, WP)
    assert json.dumps(w.as_json(), sort_keys=True) == before


@given(st.lists(st.text(min_size=1, max_size=30).filter(str.strip), max_size=5))
def test_new_items_get_fresh_program_ids(texts):
    result = advance(world(), "t1", [], {"consequences": texts}, WP)
    ids = [i["id"] for i in result.world.pendingInjections]
    assert len(ids) == len(set(ids))
    assert result.world.nextId >= 10 + len(texts)


def test_no_proposal_is_one_round_of_mechanics():
    result = advance(world(), "t1", [], None, WP)
    assert result.outcome == "committed" and result.world.round == 1
    assert {"type": "undercurrents_paused", "by": "w3"} in result.events
