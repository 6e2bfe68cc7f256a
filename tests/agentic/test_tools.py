"""The orchestrator's tool registry (``roleplay.agentic.engine.tools``), pure: the definitions the
model is offered, how its calls are sorted into accepted and ignored (unknown, not enabled,
malformed, duplicate, over the cap, the Director never counted), the forced specialists, and
how a specialist's result is cut or refused."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from roleplay.agentic.engine import tools
from roleplay.llm.types import ToolCall
from roleplay.scenarios.config import DIRECTOR_TOOL, SPECIALISTS, TOOLS

ALL = list(TOOLS)


def call(name, arguments=None, id=None):
    """A model's tool call; ``arguments`` defaults to a valid ``{reason}``."""
    if arguments is None:
        arguments = {"reason": "something changed"}
    return ToolCall(id if id is not None else f"id-{name}", name, arguments)


def pick(calls, *, enabled=ALL, max_tool_calls=7, director=True):
    return tools.select(calls, enabled=enabled, max_tool_calls=max_tool_calls, director=director)


def whys(selection):
    return [(i["name"], i["why"]) for i in selection.ignored]


# definitions


def test_the_registry_holds_six_specialists_and_the_director_last():
    assert len(TOOLS) == 7 and TOOLS[-1] == DIRECTOR_TOOL
    assert set(tools.DESCRIPTIONS) == set(TOOLS)


def test_a_definition_is_an_openai_function_with_a_required_reason_and_an_optional_focus():
    (definition,) = tools.definitions(["judge_npc"])
    assert definition["type"] == "function"
    function = definition["function"]
    assert function["name"] == "judge_npc"
    assert function["description"] == tools.DESCRIPTIONS["judge_npc"]
    parameters = function["parameters"]
    assert parameters["type"] == "object"
    assert set(parameters["properties"]) == {"reason", "focus"}
    assert all(p["type"] == "string" for p in parameters["properties"].values())
    assert parameters["required"] == ["reason"]


def test_definitions_come_in_registry_order_whatever_order_they_are_asked_in():
    asked = [DIRECTOR_TOOL, "direct_scene", "analyze_plot", "simulate_world"]
    names = [d["function"]["name"] for d in tools.definitions(asked)]
    assert names == ["analyze_plot", "simulate_world", "direct_scene", DIRECTOR_TOOL]
    assert [d["function"]["name"] for d in tools.definitions(list(reversed(ALL)))] == ALL


def test_definitions_leave_out_names_outside_the_registry():
    names = [d["function"]["name"] for d in tools.definitions(["summon_dragon", "judge_npc"])]
    assert names == ["judge_npc"]
    assert tools.definitions([]) == []


# select: what is accepted


def test_a_valid_call_is_accepted_with_its_reason_and_focus_stripped():
    chosen = pick([call("judge_npc", {"reason": "  a stranger  ", "focus": " the door "})])
    assert chosen.ignored == []
    (accepted,) = chosen.specialists
    assert (accepted.id, accepted.name) == ("id-judge_npc", "judge_npc")
    assert (accepted.reason, accepted.focus, accepted.forced) == ("a stranger", "the door", False)
    assert accepted.as_json() == {
        "id": "id-judge_npc",
        "name": "judge_npc",
        "reason": "a stranger",
        "focus": "the door",
        "forced": False,
    }


def test_focus_may_be_left_out_or_null():
    chosen = pick([call("judge_npc"), call("analyze_plot", {"reason": "r", "focus": None})])
    assert [c.focus for c in chosen.specialists] == ["", ""]
    assert chosen.ignored == []


def test_a_call_without_an_id_gets_one_from_its_name():
    chosen = pick([SimpleNamespace(name="analyze_plot", arguments={"reason": "r"})])
    assert chosen.specialists[0].id == "call-analyze_plot"


def test_the_director_is_kept_apart_from_the_specialists():
    chosen = pick([call(DIRECTOR_TOOL), call("analyze_plot")])
    assert chosen.director is not None and chosen.director.name == DIRECTOR_TOOL
    assert [c.name for c in chosen.specialists] == ["analyze_plot"]
    assert chosen.requested == ["analyze_plot", DIRECTOR_TOOL]


# select: what is ignored, and why


def test_an_unknown_name_is_ignored_as_unknown_tool():
    chosen = pick([call("summon_dragon", id="x1"), call("judge_npc")])
    assert chosen.ignored == [{"id": "x1", "name": "summon_dragon", "why": tools.UNKNOWN}]
    assert [c.name for c in chosen.specialists] == ["judge_npc"]
    assert tools.UNKNOWN == "unknown_tool"


def test_a_tool_the_scenario_did_not_enable_is_ignored_as_not_enabled():
    chosen = pick(
        [call("simulate_world"), call(DIRECTOR_TOOL), call("judge_npc")], enabled=["judge_npc"]
    )
    assert whys(chosen) == [("simulate_world", "not_enabled"), (DIRECTOR_TOOL, "not_enabled")]
    assert chosen.director is None
    assert [c.name for c in chosen.specialists] == ["judge_npc"]


def test_director_false_refuses_the_director_even_when_enabled():
    chosen = pick([call(DIRECTOR_TOOL), call("analyze_plot")], director=False)
    assert chosen.director is None
    assert whys(chosen) == [(DIRECTOR_TOOL, "not_enabled")]
    assert [c.name for c in chosen.specialists] == ["analyze_plot"]


@pytest.mark.parametrize(
    "arguments",
    [
        "reason: because",  # not an object
        ["because"],
        None,
        {},  # no reason
        {"focus": "the door"},
        {"reason": ""},  # blank reason
        {"reason": "   "},
        {"reason": 3},  # not text
        {"reason": "r", "mood": "grim"},  # an extra key
        {"reason": "r", "focus": 7},  # a focus that is not text
        {"reason": "r", "focus": ["a", "b"]},
    ],
)
def test_malformed_arguments_are_ignored(arguments):
    chosen = tools.select([ToolCall("c1", "judge_npc", arguments)], enabled=ALL, max_tool_calls=7)
    assert chosen.specialists == [] and chosen.director is None
    assert chosen.ignored == [{"id": "c1", "name": "judge_npc", "why": "malformed_arguments"}]


def test_malformed_director_arguments_are_ignored_too():
    chosen = pick([call(DIRECTOR_TOOL, {"reason": " "})])
    assert chosen.director is None
    assert whys(chosen) == [(DIRECTOR_TOOL, "malformed_arguments")]


def test_a_repeated_specialist_is_a_duplicate_and_the_first_one_counts():
    chosen = pick(
        [
            call("judge_npc", {"reason": "first"}, id="a"),
            call("judge_npc", {"reason": "second"}, id="b"),
        ]
    )
    assert [(c.id, c.reason) for c in chosen.specialists] == [("a", "first")]
    assert chosen.ignored == [{"id": "b", "name": "judge_npc", "why": "duplicate"}]


def test_a_repeated_director_is_a_duplicate():
    chosen = pick([call(DIRECTOR_TOOL, id="d1"), call(DIRECTOR_TOOL, id="d2")])
    assert chosen.director is not None and chosen.director.id == "d1"
    assert chosen.ignored == [{"id": "d2", "name": DIRECTOR_TOOL, "why": "duplicate"}]


def test_specialists_over_max_tool_calls_are_ignored():
    names = ["analyze_plot", "judge_npc", "audit_knowledge", "simulate_world"]
    chosen = pick([call(name) for name in names], max_tool_calls=2)
    assert [c.name for c in chosen.specialists] == ["analyze_plot", "judge_npc"]
    assert whys(chosen) == [
        ("audit_knowledge", "over_max_tool_calls"),
        ("simulate_world", "over_max_tool_calls"),
    ]


def test_specialists_over_max_parallel_tools_are_ignored_and_the_smaller_cap_names_itself():
    names = ["analyze_plot", "judge_npc", "audit_knowledge", "simulate_world"]
    chosen = tools.select(
        [call(n) for n in [*names, DIRECTOR_TOOL]], enabled=ALL, max_tool_calls=7, max_parallel=2
    )
    assert [c.name for c in chosen.specialists] == ["analyze_plot", "judge_npc"]
    assert chosen.director is not None  # the Director counts against neither cap
    assert whys(chosen) == [
        ("audit_knowledge", "over_max_parallel_tools"),
        ("simulate_world", "over_max_parallel_tools"),
    ]
    chosen = tools.select([call(n) for n in names], enabled=ALL, max_tool_calls=1, max_parallel=3)
    assert whys(chosen)[0] == ("judge_npc", "over_max_tool_calls")


def test_the_director_does_not_count_against_max_tool_calls():
    # Before the specialists, after them, and with the cap already reached.
    first = pick([call(DIRECTOR_TOOL), call("analyze_plot"), call("judge_npc")], max_tool_calls=2)
    assert [c.name for c in first.specialists] == ["analyze_plot", "judge_npc"]
    assert first.director is not None and first.ignored == []
    last = pick([call("analyze_plot"), call("judge_npc"), call(DIRECTOR_TOOL)], max_tool_calls=1)
    assert [c.name for c in last.specialists] == ["analyze_plot"]
    assert last.director is not None
    assert whys(last) == [("judge_npc", "over_max_tool_calls")]


def test_every_ignored_call_is_recorded_in_order_and_none_is_accepted_twice():
    chosen = pick(
        [
            call("summon_dragon"),
            call("simulate_world"),
            call("judge_npc", "bad"),
            call("analyze_plot"),
            call("analyze_plot"),
            call("manage_callbacks"),
        ],
        enabled=["analyze_plot", "judge_npc", "manage_callbacks", DIRECTOR_TOOL],
        max_tool_calls=1,
    )
    assert [c.name for c in chosen.specialists] == ["analyze_plot"]
    assert whys(chosen) == [
        ("summon_dragon", "unknown_tool"),
        ("simulate_world", "not_enabled"),
        ("judge_npc", "malformed_arguments"),
        ("analyze_plot", "duplicate"),
        ("manage_callbacks", "over_max_tool_calls"),
    ]


# add_forced


def test_add_forced_adds_only_the_missing_specialists_marked_forced():
    chosen = pick([call("judge_npc", {"reason": "the model's own"})])
    tools.add_forced(chosen, ["judge_npc", "direct_scene"], "the rules")
    assert [(c.name, c.forced) for c in chosen.specialists] == [
        ("judge_npc", False),
        ("direct_scene", True),
    ]
    forced = chosen.specialists[1]
    assert (forced.id, forced.reason) == ("forced-direct_scene", "the rules")
    assert chosen.specialists[0].reason == "the model's own"  # the model's call is kept


def test_add_forced_never_adds_the_director_or_unknown_names_or_twice():
    chosen = tools.Selection()
    tools.add_forced(chosen, [DIRECTOR_TOOL, "summon_dragon", "judge_npc", "judge_npc"], "r")
    assert [c.name for c in chosen.specialists] == ["judge_npc"]
    assert chosen.director is None


def test_forced_specialists_are_not_counted_as_requested():
    chosen = pick([call("analyze_plot")])
    tools.add_forced(chosen, ["judge_npc"], "r")
    assert [c.name for c in chosen.specialists] == ["analyze_plot", "judge_npc"]
    assert chosen.requested == ["analyze_plot"]


def test_add_forced_goes_past_max_tool_calls():
    chosen = pick([call("analyze_plot")], max_tool_calls=1)
    tools.add_forced(chosen, ["judge_npc", "direct_scene"], "r")
    assert len(chosen.specialists) == 3
    assert set(SPECIALISTS) >= {c.name for c in chosen.specialists}


# cut_result


def test_a_result_is_stripped_and_kept_whole_up_to_5000_characters():
    assert tools.cut_result("  short  ") == ("short", None)
    exact = "x" * tools.RESULT_CHARS
    assert tools.RESULT_CHARS == 5000
    assert tools.cut_result(exact) == (exact, None)
    assert tools.cut_result(None) == ("", None)


def test_a_result_over_5000_characters_is_cut_to_5000_with_a_mark():
    text, error = tools.cut_result("y" * 6000)
    assert error is None
    assert len(text) == 5000
    assert text.endswith(" …") and text.startswith("y" * 4998)


def test_with_an_enforced_limit_an_oversized_result_is_a_failure_not_a_cut():
    assert tools.cut_result("z" * 513, enforce_limit=512) == ("", "tool_result_oversized")
    assert tools.cut_result("z" * 512, enforce_limit=512) == ("z" * 512, None)
    # The limit is taken on the stripped text.
    assert tools.cut_result("  " + "z" * 512 + "  ", enforce_limit=512) == ("z" * 512, None)


def test_an_enforced_limit_above_5000_keeps_the_result_whole():
    """Seed 002 line 556: under ``enforce`` a result within its limit is kept whole."""
    assert tools.cut_result("w" * 6000, enforce_limit=20000) == ("w" * 6000, None)
    assert tools.cut_result("w" * 20000, enforce_limit=20000) == ("w" * 20000, None)
