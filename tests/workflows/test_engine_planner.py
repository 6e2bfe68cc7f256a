"""The static planner: each refusal with its stable code and the node it names, and the run
order (dependencies first, ties in declaration order, the same plan every time). Pure."""

from __future__ import annotations

import random

import pytest

from roleplay.workflows.engine.contracts import Node
from roleplay.workflows.engine.errors import PlanError
from roleplay.workflows.engine.planner import plan, problems
from roleplay.workflows.engine.spec import WorkflowSpec

CAPS = ("read", "write", "model")


def spec(*nodes: Node, visible=CAPS) -> WorkflowSpec:
    return WorkflowSpec(visible_capabilities=tuple(visible), nodes=nodes)


def n(node_id: str, *deps: str, capability: str = "read") -> Node:
    return Node(id=node_id, capability=capability, depends_on=deps)


def order(workflow: WorkflowSpec, registered=CAPS) -> list[str]:
    made = plan(workflow, profile_id="s1", scenario_id="s1", registered=registered)
    assert made.profile_id == "s1"
    return [node.id for node in made.nodes]


def refusal(workflow: WorkflowSpec, registered=CAPS, profile="s1") -> PlanError:
    with pytest.raises(PlanError) as caught:
        plan(workflow, profile_id=profile, scenario_id="s1", registered=registered)
    return caught.value


def test_nodes_come_after_their_dependencies():
    assert order(spec(n("scene", "rule"), n("rule"))) == ["rule", "scene"]
    graph = spec(n("d", "b", "c"), n("c", "a"), n("b", "a"), n("a"))
    assert order(graph) == ["a", "c", "b", "d"]


def test_ties_keep_declaration_order():
    assert order(spec(n("z"), n("y"), n("x"))) == ["z", "y", "x"]
    # x becomes ready after a; z and y were ready earlier and were declared before it
    assert order(spec(n("z"), n("x", "a"), n("y"), n("a"))) == ["z", "y", "a", "x"]
    # once a is placed, x (declared before c) goes before c
    assert order(spec(n("a"), n("x", "a"), n("c"))) == ["a", "x", "c"]


def test_a_graph_in_dependency_order_keeps_its_order_and_plans_are_deterministic():
    nodes = [n("n0")] + [n(f"n{i}", f"n{i - 1}") for i in range(1, 10)]
    assert order(spec(*nodes)) == [f"n{i}" for i in range(10)]
    rng = random.Random(35)
    shuffled = nodes[:]
    rng.shuffle(shuffled)
    answers = {tuple(order(spec(*shuffled))) for _ in range(5)}
    assert answers == {tuple(f"n{i}" for i in range(10))}


def test_repeated_dependency_is_counted_once():
    graph = WorkflowSpec(CAPS, (Node("b", "read", depends_on=("a", "a")), Node("a", "read")))
    assert order(graph) == ["a", "b"]


def test_profile_must_be_the_scenarios():
    error = refusal(spec(n("a")), profile="other")
    assert error.code == "profile_mismatch" and error.node is None
    assert error.to_json()["code"] == "profile_mismatch"


def test_duplicate_node_ids_are_refused_naming_the_node():
    error = refusal(spec(n("a"), n("b"), n("a")))
    assert (error.code, error.node) == ("duplicate_node", "a")
    assert error.details == {"node": "a"}


def test_a_missing_dependency_is_refused_naming_the_dependent():
    error = refusal(spec(n("a"), n("b", "a", "ghost")))
    assert (error.code, error.node) == ("missing_dependency", "b")
    assert "ghost" in error.message


def test_a_self_dependency_is_a_cycle():
    error = refusal(spec(n("a"), n("b", "b")))
    assert (error.code, error.node) == ("dependency_cycle", "b")
    assert "itself" in error.message


def test_a_cycle_is_refused_naming_a_node_on_it():
    graph = spec(n("start"), n("x", "start", "z"), n("y", "x"), n("z", "y"), n("after", "z"))
    error = refusal(graph)
    assert error.code == "dependency_cycle"
    assert error.node == "x"  # the cycle's earliest-declared node
    assert "x → z → y → x" in error.message


def test_a_capability_must_be_visible_then_registered():
    invisible = refusal(spec(n("a"), n("b", capability="secret")))
    assert (invisible.code, invisible.node) == ("invisible_capability", "b")
    unregistered = refusal(spec(n("a"), n("b", capability="model")), registered={"read"})
    assert (unregistered.code, unregistered.node) == ("unregistered_capability", "b")


def test_problems_lists_every_refusal_first_check_first():
    graph = spec(
        n("a", "ghost"),
        n("b", "b", capability="model"),
        n("c", capability="secret"),
        n("x", "y"),
        n("y", "x"),
    )
    found = [
        (e.code, e.node)
        for e in problems(graph, profile_id="s", scenario_id="s", registered={"read"})
    ]
    assert found == [
        ("invisible_capability", "c"),
        ("unregistered_capability", "b"),
        ("missing_dependency", "a"),
        ("dependency_cycle", "b"),
        ("dependency_cycle", "x"),
    ]
    assert problems(spec(n("a")), profile_id="s", scenario_id="s", registered=CAPS) == []


def test_ids_compare_as_text():
    assert order(spec(n("a")), registered=CAPS) == ["a"]
    made = plan(spec(n("a")), profile_id=7, scenario_id="7", registered=CAPS)  # type: ignore[arg-type]
    assert [node.id for node in made.nodes] == ["a"]


def test_an_empty_graph_plans_to_nothing():
    assert order(spec()) == []
