"""Settling an event, pure: evidence for every completed goal and every moved line, nothing
but open goals completed, ``unknown`` changing nothing, a duplicate ignored, the counters
(``eventCount``, starvation, cursors) only the program's, the promotion test at ceil(2n/3),
and the narrative snapshot's JSON round trip."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from story.engine.goals import Goal
from story.engine.narrative import Narrative, NarrativeInvalid, StoryLine
from story.engine.policy import NarrativePolicy
from story.engine.rebranch import rebranch
from story.engine.settle import SettlementInvalid, settle_event

POLICY = NarrativePolicy()
# The event's evidence: message id -> kind (the replies' prose and the user's actions).
EVIDENCE = {"a1": "prose", "u1": "user_action", "a2": "prose"}


def narrative(goals=None):
    n = Narrative(
        main=StoryLine("the old archive", "learn what the key opens"),
        sub=StoryLine("trust", "win Lia's help"),
    )
    n.cycle.pending = goals or [
        Goal(
            "g1",
            "main",
            "reveal",
            "the crest is recognised",
            reward="entry to the archive",
            core=True,
        ),
        Goal("g2", "sub", "relationship", "Lia shares a worry"),
        Goal("g3", "main", "reward", "the archive opens", prerequisites=("g1",)),
    ]
    n.cycle.needPlan = False
    n.nextGoal = 4
    return n


def settled(**extra):
    return {"outcome": "settled", **extra}


def test_a_goal_completed_with_evidence_a_line_moved_and_counters_kept_by_the_program():
    before = narrative()
    result = settle_event(
        before,
        "e1",
        settled(
            completedGoals=[{"id": "g1", "evidence": ["a1"]}],
            progress={
                "main": {"advance": True, "evidence": ["a1", "u1"]},
                "sub": {"advance": False},
            },
            observed={"valence": 0.2, "arousal": -0.5, "dominance": 1},
            direction=None,
        ),
        EVIDENCE,
        POLICY,
    )
    after = result.narrative
    assert result.outcome == "settled"
    assert [g.done for g in after.cycle.pending] == [True, False, False]
    assert (after.main.cursor, after.main.starve, after.sub.cursor, after.sub.starve) == (
        1,
        0,
        0,
        1,
    )
    assert after.main.unpaid == ["entry to the archive"]  # owed once its setup is done
    assert after.clock.eventCount == 1 and after.clock.settledEvents == ["e1"]
    assert after.clock.completedGoals == ["g1"]
    assert after.emotion["observed"] == {"valence": 0.2, "arousal": -0.5, "dominance": 1.0}
    assert before.clock.eventCount == 0 and not before.cycle.pending[0].done  # untouched
    paid = settle_event(
        after,
        "e2",
        settled(completedGoals=[{"id": "g3", "evidence": ["a2"]}]),
        EVIDENCE,
        POLICY,
    ).narrative
    assert paid.main.unpaid == []


def test_seen_but_not_recognised_is_not_completed_without_evidence():
    for bad in (
        # the user saying so is no evidence that it happened: the prose must show it
        settled(completedGoals=[{"id": "g1", "evidence": ["u1"]}]),
        settled(progress={"main": {"advance": True, "evidence": ["u1"]}}),
        settled(completedGoals=[{"id": "g1"}]),
        settled(completedGoals=[{"id": "g1", "evidence": []}]),
        settled(completedGoals=[{"id": "g1", "evidence": ["a9"]}]),
        settled(progress={"main": {"advance": True}}),
        settled(progress={"main": {"advance": True, "evidence": ["elsewhere"]}}),
    ):
        with pytest.raises(SettlementInvalid):
            settle_event(narrative(), "e1", bad, EVIDENCE, POLICY)


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        {"outcome": "done"},
        settled(eventCount=9),
        settled(completedGoals=[{"id": "g9", "evidence": ["a1"]}]),
        settled(completedGoals="g1"),
        settled(progress={"third": {"advance": True, "evidence": ["a1"]}}),
        settled(progress={"main": {"advance": "yes"}}),
        settled(observed={"valence": 2, "arousal": 0, "dominance": 0}),
        settled(observed={"valence": 0}),
        settled(observed={"valence": True, "arousal": 0, "dominance": 0}),
        settled(direction=5),
    ],
)
def test_proposals_that_break_a_rule_are_refused(bad):
    with pytest.raises(SettlementInvalid):
        settle_event(narrative(), "e1", bad, EVIDENCE, POLICY)


def test_a_done_goal_cannot_be_completed_again():
    n = narrative()
    n.cycle.pending[1] = Goal("g2", "sub", "relationship", "x", done=True)
    with pytest.raises(SettlementInvalid):
        settle_event(
            n, "e1", settled(completedGoals=[{"id": "g2", "evidence": ["a1"]}]), EVIDENCE, POLICY
        )


def test_unknown_changes_nothing_and_a_duplicate_is_ignored():
    n = narrative()
    unknown = settle_event(n, "e1", {"outcome": "unknown"}, EVIDENCE, POLICY)
    assert unknown.outcome == "unknown" and unknown.narrative is n
    assert n.main.starve == 0 and n.clock.eventCount == 0
    once = settle_event(n, "e1", settled(), EVIDENCE, POLICY).narrative
    again = settle_event(once, "e1", settled(), EVIDENCE, POLICY)
    assert again.outcome == "duplicate" and again.narrative.clock.eventCount == 1


def test_sub_rebranch_after_five_events_without_progress_and_main_diagnostic_after_three():
    n = narrative()
    diagnostics: list[str] = []
    actions: list[dict] = []
    for i in range(5):
        result = settle_event(n, f"e{i}", settled(), EVIDENCE, POLICY)
        n, actions, diagnostics = result.narrative, result.actions, result.diagnostics
    assert n.sub.starve == 5 and n.main.starve == 5
    assert {"type": "rebranch", "scope": "sub"} in actions
    assert "main_line_starving" in diagnostics


def test_three_events_with_the_same_new_pursuit_redirect_the_main_line():
    n = narrative()
    for i in range(3):
        result = settle_event(
            n, f"e{i}", settled(direction="find the lost caravan"), EVIDENCE, POLICY
        )
        n = result.narrative
    assert result.actions[0] == {
        "type": "rebranch",
        "scope": "main",
        "direction": "find the lost caravan",
    }


def test_promotion_test_at_two_thirds_then_the_cycle_advances_after_two_events():
    goals = [Goal(f"g{i}", "main" if i % 2 else "sub", "reveal", "x") for i in range(1, 7)]
    n = narrative(goals)
    done = [{"id": f"g{i}", "evidence": ["a1"]} for i in range(1, 5)]  # 4 of 6 = ceil(12/3)
    first = settle_event(n, "e1", settled(completedGoals=done[:3]), EVIDENCE, POLICY)
    assert first.narrative.cycle.trialSince is None
    second = settle_event(first.narrative, "e2", settled(completedGoals=done[3:]), EVIDENCE, POLICY)
    assert "promotion_test_started" in second.diagnostics
    n = second.narrative
    n = settle_event(n, "e3", settled(), EVIDENCE, POLICY).narrative
    assert n.cycle.number == 1
    last = settle_event(n, "e4", settled(), EVIDENCE, POLICY)
    assert "cycle_promoted" in last.diagnostics
    assert last.narrative.cycle.number == 2 and last.narrative.cycle.needPlan
    assert [g.id for g in last.narrative.cycle.pending] == ["g5", "g6"]
    assert {"type": "plan-cycle"} in last.actions


def test_core_goals_done_end_the_promotion_test_early():
    goals = [
        Goal("g1", "main", "reveal", "x", core=True),
        Goal("g2", "sub", "reveal", "y"),
        Goal("g3", "sub", "conflict", "z"),
    ]
    n = narrative(goals)
    n = settle_event(
        n,
        "e1",
        settled(
            completedGoals=[{"id": "g2", "evidence": ["a1"]}, {"id": "g3", "evidence": ["a1"]}]
        ),
        EVIDENCE,
        POLICY,
    ).narrative
    assert n.cycle.trialSince == 1
    result = settle_event(
        n, "e2", settled(completedGoals=[{"id": "g1", "evidence": ["a2"]}]), EVIDENCE, POLICY
    )
    assert "cycle_promoted" in result.diagnostics


@given(st.lists(st.sampled_from(["settled", "unknown"]), max_size=12))
def test_event_count_counts_settled_events_only_and_the_snapshot_round_trips(outcomes):
    n = narrative()
    for i, outcome in enumerate(outcomes):
        n = settle_event(n, f"e{i}", {"outcome": outcome}, EVIDENCE, POLICY).narrative
    assert n.clock.eventCount == outcomes.count("settled")
    assert n.main.starve == outcomes.count("settled")
    again = Narrative.from_json(json.loads(json.dumps(n.as_json())))
    assert again.as_json() == n.as_json()


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d.pop("main"),
        lambda d: d["emotion"]["target"].update(valence=3),
        lambda d: d["emotion"]["observed"].pop("arousal"),
        lambda d: d["main"].update(cursor=-1),
        lambda d: d["cycle"]["pending"].append(dict(d["cycle"]["pending"][0])),
        lambda d: d["clock"].update(eventCount=-2),
        lambda d: d["cycle"].update(extra=1),
    ],
)
def test_broken_narrative_snapshots_are_refused(breakage):
    data = narrative().as_json()
    breakage(data)
    with pytest.raises(NarrativeInvalid):
        Narrative.from_json(data)


def test_a_main_rebranch_is_asked_once_for_one_sustained_pursuit():
    """Events 3, 4 and 5 with the same new pursuit: one rebranch (at the third), not one
    per settled event; the rebranch starts the count again."""
    n = narrative()
    rebranched_at = []
    for i in range(1, 6):
        result = settle_event(
            n, f"e{i}", settled(direction="find the lost caravan"), EVIDENCE, POLICY
        )
        n = result.narrative
        for action in result.actions:
            if action["type"] == "rebranch" and action["scope"] == "main":
                rebranched_at.append(i)
                proposal = {"theme": "the caravan", "direction": "trace the caravan's route"}
                n = rebranch(n, "main", proposal, action["direction"])
    assert rebranched_at == [3]
    assert n.clock.recentDirections == ["find the lost caravan"] * 2


def test_a_pursuit_that_is_already_the_main_direction_asks_for_no_rebranch():
    n = narrative()
    for i in range(4):
        result = settle_event(
            n, f"e{i}", settled(direction="Learn what the KEY opens"), EVIDENCE, POLICY
        )
        n = result.narrative
        assert not [a for a in result.actions if a["type"] == "rebranch"]
