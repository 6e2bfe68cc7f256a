"""The step cap, the shared Actor budget, the failure table and the picture rules."""

from __future__ import annotations

import pytest

from roleplay.frontloop.engine import fallbacks as fb
from roleplay.frontloop.engine.budget import (
    DEFAULT_ACTOR_TOKENS,
    Budget,
    actor_budget,
    charge,
    step_cap,
)
from roleplay.frontloop.engine.visual_beat import (
    ALREADY_SCHEDULED,
    NO_SEGMENT,
    ImageTarget,
    auto_schedules,
    image_target,
)


def test_step_cap_is_12_or_13_with_dio():
    assert step_cap(False) == 12
    assert step_cap(True) == 13


@pytest.mark.parametrize(
    ("max_tokens", "budget"),
    [
        (None, 2048),
        (0, 2048),
        (-1, 2048),
        (True, 2048),
        ("4096", 2048),
        (1.5, 2048),
        (1, 1),
        (2047, 2047),
        (2049, 2049),
        (8192, 8192),
    ],
)
def test_the_budget_is_the_actor_configs_max_tokens_else_2048(max_tokens, budget):
    assert actor_budget(max_tokens) == budget
    assert DEFAULT_ACTOR_TOKENS == 2048


@pytest.mark.parametrize(
    ("reported", "text", "left", "charged"),
    [
        (300, "text", 2048, 300),
        (2047, "text", 2048, 2047),
        (2048, "text", 2048, 2048),
        (2049, "text", 2048, 2048),  # never below zero
        (None, "text", 2048, 2048),  # no output tokens reported: the whole remainder
        (None, "text", 17, 17),
        (0, "text", 900, 900),  # zeros for a text that exists: not measured
        (0, "", 900, 0),  # nothing written, nothing spent
        (None, "", 900, 900),  # a timeout with no usage: the seed's rule
        (-5, "text", 900, 900),
        (True, "text", 900, 900),
        (1, "text", 0, 0),
    ],
)
def test_charges(reported, text, left, charged):
    assert charge(reported, text, left) == charged


def test_segments_share_the_budget():
    budget = Budget(2048)
    budget, cost = budget.charged(1000, "a")
    assert (cost, budget.left) == (1000, 1048)
    budget, cost = budget.charged(1047, "b")
    assert (cost, budget.left) == (1047, 1)
    budget, cost = budget.charged(None, "c")
    assert (cost, budget.left) == (1, 0)
    assert Budget(10, 25).left == 0


# The failure table, row by row (seed 002 line 498).
@pytest.mark.parametrize(
    ("event", "usable", "complete", "action"),
    [
        (fb.CONTROLLER_ERROR, 0, 0, fb.DIRECT_GENERATION),
        (fb.CONTROLLER_ERROR, 1, 1, fb.FINISH),
        (fb.ILLEGAL_REQUEST, 0, 0, fb.DIRECT_GENERATION),
        (fb.ILLEGAL_REQUEST, 2, 2, fb.FINISH),
        (fb.STEPS_EXHAUSTED, 0, 0, fb.DIRECT_GENERATION),
        (fb.STEPS_EXHAUSTED, 2, 1, fb.FINISH),
        (fb.BUDGET_EXHAUSTED, 1, 1, fb.FINISH),
        (fb.ACTOR_EMPTY, 1, 1, fb.FAILURE_RECEIPT),
        (fb.ACTOR_TIMEOUT, 2, 1, fb.FAILURE_RECEIPT),
        (fb.ACTOR_EMPTY, 0, 0, fb.PROPAGATE),  # the first actor step failed
        (fb.ACTOR_TIMEOUT, 1, 0, fb.PROPAGATE),  # its partial text is no complete segment
        (fb.ACTOR_ERROR, 0, 0, fb.PROPAGATE),
        (fb.ACTOR_ERROR, 2, 2, fb.PROPAGATE),
        (fb.UNRECOVERABLE, 3, 3, fb.PROPAGATE),
        (fb.CANCELLED, 0, 0, fb.PROPAGATE),
        (fb.CANCELLED, 2, 2, fb.PROPAGATE),
        ("something_else", 2, 2, fb.PROPAGATE),
    ],
)
def test_failure_table(event, usable, complete, action):
    decision = fb.decide(event, usable=usable, complete=complete, detail="code_x")
    assert decision.action == action
    assert decision.reason
    if event in fb.EVENTS:
        assert decision.event == event and "code_x" in decision.reason
    assert decision.to_json()["action"] == action


def test_every_event_has_a_row():
    for event in fb.EVENTS:
        for usable, complete in ((0, 0), (1, 0), (1, 1)):
            assert fb.decide(event, usable=usable, complete=complete).event == event


def beat(**overrides):
    args = dict(complete=True, finish_reason="stop", steps_left=1, index=0, pictured=()) | overrides
    return auto_schedules(args.pop("mode", "visual_beat"), **args)


def test_a_visual_beat_is_pictured_once_when_a_step_is_left():
    assert beat()
    assert beat(steps_left=5)
    assert not beat(steps_left=0)  # the segment used the last step
    assert not beat(pictured=(0,))  # never twice
    assert beat(index=1, pictured=(0,))
    assert not beat(mode="complete")
    assert not beat(complete=False)  # a timeout's partial text
    assert not beat(finish_reason="length")  # cut off by the token limit
    assert beat(finish_reason=None)


def test_generate_image_takes_the_latest_segment_once():
    assert image_target(0, ()) == ImageTarget(None, NO_SEGMENT)
    assert image_target(1, ()) == ImageTarget(0)
    assert image_target(3, (0,)) == ImageTarget(2)
    assert image_target(3, (2,)) == ImageTarget(None, ALREADY_SCHEDULED)
