"""Story's narrative rules, pure: a plan's merge (5–7 goals, a sub goal, rewards need a
setup, no cycles, ids and completion never the model's), promotion at ceil(2n/3), the deal
(eligibility, priority, forced rotation every ``dealEveryTurns``), and the 3/5/3 triggers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from story.engine.deal import DealState, deal, eligible
from story.engine.goals import Goal, PlanInvalid, merge_plan, promotion_due, promotion_threshold
from story.engine.policy import NarrativePolicy
from story.engine.triggers import after_settlement

POLICY = NarrativePolicy()


def item(ref, serves="main", angle="reveal", prerequisites=(), **extra):
    return {
        "ref": ref,
        "serves": serves,
        "angle": angle,
        "gist": f"goal {ref}",
        "prerequisites": list(prerequisites),
        **extra,
    }


def plan(n=5, **first):
    items = [item("a", **first)] + [item(f"r{i}") for i in range(1, n - 1)]
    return items + [item("s", serves="sub", angle="relationship")]


def test_a_plan_gets_program_ids_keeps_unfinished_goals_and_completes_nothing():
    old = [
        Goal("g1", "main", "reveal", "old open"),
        Goal("g2", "sub", "conflict", "old done", done=True),
    ]
    proposal = plan(5)
    proposal[1]["done"] = True
    proposal[2]["prerequisites"] = ["a", "g1"]
    goals, next_number = merge_plan(old, proposal, POLICY, 3)
    assert [g.id for g in goals] == ["g1", "g3", "g4", "g5", "g6", "g7"]
    assert next_number == 8
    assert not any(g.done for g in goals)
    assert goals[3].prerequisites == ("g3", "g1")


@pytest.mark.parametrize("n", [4, 8])
def test_a_plan_adds_five_to_seven_goals(n):
    with pytest.raises(PlanInvalid):
        merge_plan([], plan(n), POLICY, 1)


@pytest.mark.parametrize("n", [5, 6, 7])
def test_plans_of_five_six_and_seven_are_accepted(n):
    goals, _ = merge_plan([], plan(n), POLICY, 1)
    assert len(goals) == n


def test_a_plan_needs_a_sub_goal():
    proposal = [item(f"r{i}") for i in range(5)]
    with pytest.raises(PlanInvalid, match="sub"):
        merge_plan([], proposal, POLICY, 1)


def test_a_reward_needs_an_explicit_setup_goal():
    with pytest.raises(PlanInvalid, match="setup"):
        merge_plan([], plan(5, angle="reward"), POLICY, 1)
    reward_on_reward = plan(5)
    reward_on_reward[0] = item("a", angle="reward", prerequisites=["r1"])
    reward_on_reward[1] = item("r1", angle="reward", prerequisites=["r2"])
    with pytest.raises(PlanInvalid, match="g1"):  # each reward names its own setup
        merge_plan([], reward_on_reward, POLICY, 1)
    reward_on_setup = plan(5)
    reward_on_setup[0] = item("a", angle="reward", prerequisites=["r1"])
    goals, _ = merge_plan([], reward_on_setup, POLICY, 1)
    assert goals[0].prerequisites == ("g2",)
    only_rewards = plan(5)
    only_rewards[0] = item("a", angle="reward", prerequisites=["r1"])
    only_rewards[1] = item("r1", angle="reward", prerequisites=["a"])
    with pytest.raises(PlanInvalid):
        merge_plan([], only_rewards, POLICY, 1)
    setup_done = [Goal("g1", "main", "reveal", "the crest is recognised", done=True)]
    goals, _ = merge_plan(setup_done, plan(5, angle="reward", prerequisites=["g1"]), POLICY, 2)
    assert goals[0].angle == "reward" and goals[0].prerequisites == ("g1",)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda p: p[0].update(serves="side"),
        lambda p: p[0].update(angle="romance"),
        lambda p: p[0].update(gist="  "),
        lambda p: p[0].update(ref=""),
        lambda p: p[1].update(ref="a"),
        lambda p: p[0].update(prerequisites=["nowhere"]),
        lambda p: p[0].update(prerequisites=["a"]),
        lambda p: p[0].update(prerequisites="r1"),
        lambda p: p[0].update(priority="high"),
        lambda p: (p[0].update(prerequisites=["r1"]), p[1].update(prerequisites=["a"])),
    ],
)
def test_bad_proposals_are_rejected_whole(mutate):
    proposal = plan(5)
    mutate(proposal)
    with pytest.raises(PlanInvalid):
        merge_plan([], proposal, POLICY, 1)


def test_not_a_list_is_rejected():
    for bad in (None, {"goals": []}, "goals", [1, 2, 3, 4, 5]):
        with pytest.raises(PlanInvalid):
            merge_plan([], bad, POLICY, 1)


@given(st.integers(1, 60))
def test_promotion_at_ceil_two_thirds(total):
    need = promotion_threshold(total)
    assert need == math.ceil(total * 2 / 3)
    goals = [Goal(f"g{i}", "main", "reveal", "x", done=i < need) for i in range(total)]
    assert promotion_due(goals)
    goals[0] = Goal("g0", "main", "reveal", "x", done=False)
    assert not promotion_due(goals)
    assert not promotion_due([])


# The deal -----------------------------------------------------------------------------


def test_only_goals_whose_prerequisites_are_done_are_dealt():
    goals = [
        Goal("g1", "main", "reveal", "setup"),
        Goal("g2", "main", "reward", "payoff", priority=5, prerequisites=("g1",)),
    ]
    dealt, _ = deal(goals, "end", DealState(), POLICY)
    assert dealt.goal.id == "g1"
    done = [Goal("g1", "main", "reveal", "setup", done=True), goals[1]]
    dealt, _ = deal(done, "end", DealState(), POLICY)
    assert dealt.goal.id == "g2" and dealt.bias == "progress"
    dealt, state = deal([goals[1]], "end", DealState(), POLICY)
    assert dealt.goal is None and state == DealState()


def test_priority_then_starvation_then_phase():
    goals = [
        Goal("g1", "main", "reveal", "a", priority=3),
        Goal("g2", "sub", "relationship", "b", priority=3),
        Goal("g3", "main", "conflict", "c", priority=4),
    ]
    assert deal(goals, "start", DealState(), POLICY)[0].goal.id == "g3"
    even = goals[:2]
    assert deal(even, "start", DealState(), POLICY, starve={"sub": 2})[0].goal.id == "g2"
    assert deal(even, "end", DealState(), POLICY)[0].goal.id == "g1"
    assert deal(even, "start", DealState(), POLICY)[0].goal.id == "g2"


def test_forced_rotation_after_deal_every_turns_of_one_line():
    goals = [
        Goal("g1", "main", "reveal", "a", priority=5),
        Goal("g2", "sub", "conflict", "b", priority=1),
    ]
    state = DealState()
    lines = []
    for _ in range(8):
        dealt, state = deal(goals, "develop", state, POLICY)
        lines.append(dealt.goal.serves)
        assert len(state.recent_lines) <= POLICY.dealEveryTurns
    assert lines[:4] == ["main", "main", "main", "sub"]
    assert "sub" in lines[4:8]
    dealt, _ = deal([goals[0]], "develop", DealState(["main"] * 3), POLICY)
    assert dealt.goal.id == "g1" and not dealt.forced_rotation  # nothing else to deal


def test_fresh_and_the_given_state_is_not_changed():
    goals = [Goal("g1", "main", "reveal", "a")]
    state = DealState()
    dealt, after = deal(goals, "start", state, POLICY)
    assert dealt.fresh and after.dealt == ["g1"] and state == DealState()
    again, _ = deal(goals, "start", after, POLICY)
    assert not again.fresh
    with pytest.raises(ValueError):
        deal(goals, "middle", state, POLICY)


@given(
    st.lists(
        st.tuples(st.sampled_from(["main", "sub"]), st.integers(1, 5), st.booleans()),
        min_size=1,
        max_size=8,
    )
)
def test_a_dealt_goal_is_always_eligible(specs):
    goals = [
        Goal(
            f"g{i}",
            serves,
            "reveal",
            "x",
            priority=p,
            done=done,
            prerequisites=(f"g{i - 1}",) if i else (),
        )
        for i, (serves, p, done) in enumerate(specs)
    ]
    dealt, _ = deal(goals, "develop", DealState(), POLICY)
    if dealt.goal is None:
        assert eligible(goals) == []
    else:
        assert dealt.goal in eligible(goals)


# Triggers -----------------------------------------------------------------------------


def test_main_redirect_after_the_same_new_pursuit_in_three_settled_events():
    def run(directions):
        return after_settlement(
            main_starve=0, sub_starve=0, directions=directions, need_plan=False, policy=POLICY
        )[0]

    assert run(["find the caravan"] * 2) == []
    assert run(["Find the  caravan", "find the caravan", "FIND THE CARAVAN"]) == [
        {"type": "rebranch", "scope": "main", "direction": "FIND THE CARAVAN"}
    ]
    assert run(["find the caravan", None, "find the caravan", "find the caravan"]) == []
    assert (
        run([None, "find the caravan", "find the caravan", "find the caravan"])[0]["scope"]
        == "main"
    )
    assert run(["find the caravan", "", "find the caravan"]) == []
    assert run(["find the caravan", "open the archive", "find the caravan"]) == []


def test_sub_replaced_after_five_main_only_diagnosed_after_three():
    actions, diagnostics = after_settlement(
        main_starve=3, sub_starve=4, directions=[], need_plan=True, policy=POLICY
    )
    assert actions == [{"type": "plan-cycle"}] and diagnostics == ["main_line_starving"]
    actions, diagnostics = after_settlement(
        main_starve=2, sub_starve=5, directions=[], need_plan=False, policy=POLICY
    )
    assert actions == [{"type": "rebranch", "scope": "sub"}] and diagnostics == []
