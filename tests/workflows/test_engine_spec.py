"""Reading a scenario's ``workflow`` JSON: the shape, the bounds at ±1, and hostile input
(any JSON type anywhere, lone surrogates, huge strings, repeats, 1e300) always a coded
field error with its path, never another exception. Pure: no database."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roleplay.workflows.engine import spec as wf
from roleplay.workflows.engine.errors import WorkflowInvalid
from roleplay.workflows.engine.spec import parse_workflow

GRAPH = "workflow.executionGraph.nodes"


def node(node_id="rule", capability="read_rule", **extra):
    return {"id": node_id, "capability": capability, **extra}


def workflow(*nodes, visible=("read_rule", "prepare_scene"), **extra):
    return {
        "visibleCapabilities": list(visible) if isinstance(visible, tuple | list) else visible,
        "executionGraph": {"nodes": list(nodes)},
        **extra,
    }


def errors_of(raw) -> list[dict]:
    with pytest.raises(WorkflowInvalid) as caught:
        parse_workflow(raw)
    return [dict(e) for e in caught.value.details["errors"]]


def first(raw) -> dict:
    return errors_of(raw)[0]


def test_the_seed_example_reads_with_its_defaults_written_out():
    raw = workflow(
        node(input={"location": "城门"}, required=True, projectTo="none"),
        node("scene", "prepare_scene", dependsOn=["rule"]),
        failurePolicy={"memoryRecall": "fail_turn", "memoryIngest": "best_effort"},
    )
    spec = parse_workflow(raw)
    assert [n.id for n in spec.nodes] == ["rule", "scene"]
    rule, scene = spec.nodes
    assert rule.input == {"location": "城门"} and rule.project_to == "none"
    assert scene.depends_on == ("rule",) and scene.required and not scene.parallel
    assert scene.project_to == "turn_context"
    assert spec.failure_policy.memory_recall == "fail_turn"
    stored = spec.to_json()
    assert stored["executionGraph"]["nodes"][1] == {
        "id": "scene",
        "capability": "prepare_scene",
        "input": {},
        "dependsOn": ["rule"],
        "required": True,
        "parallel": False,
        "projectTo": "turn_context",
    }
    assert parse_workflow(stored) == spec  # the stored form reads back the same


def test_nulls_mean_defaults_and_failure_policy_is_optional():
    spec = parse_workflow(
        workflow(node(input=None, dependsOn=None, required=None, parallel=None, projectTo=None))
    )
    assert spec.nodes[0].required is True and spec.nodes[0].parallel is False
    assert spec.failure_policy == wf.FailurePolicy("fail_turn", "best_effort")
    policy = parse_workflow(workflow(failurePolicy={"memoryRecall": "continue_without_memory"}))
    assert policy.failure_policy.memory_recall == "continue_without_memory"
    assert policy.failure_policy.memory_ingest == "best_effort"


@pytest.mark.parametrize(
    ("raw", "code", "path"),
    [
        (None, "wrong_type", "workflow"),
        ([], "wrong_type", "workflow"),
        ({"executionGraph": {"nodes": []}}, "required", "workflow.visibleCapabilities"),
        ({"visibleCapabilities": []}, "required", "workflow.executionGraph"),
        ({"visibleCapabilities": [], "executionGraph": {}}, "required", f"{GRAPH}"),
        (workflow(extra_field=1), "unknown_field", "workflow"),
        (workflow(visible=["a", "a"]), "duplicate", "workflow.visibleCapabilities.1"),
        (workflow(visible="read_rule"), "wrong_type", "workflow.visibleCapabilities"),
        (workflow(node(id=1e300)), "wrong_type", f"{GRAPH}.0.id"),
        (workflow(node(capability=None)), "wrong_type", f"{GRAPH}.0.capability"),
        (workflow({"capability": "x"}), "required", f"{GRAPH}.0.id"),
        (workflow({"id": "x"}), "required", f"{GRAPH}.0.capability"),
        (workflow(node(id=" rule")), "invalid_name", f"{GRAPH}.0.id"),
        (workflow(node(id="a b")), "invalid_name", f"{GRAPH}.0.id"),
        (workflow(node(id="-a")), "invalid_name", f"{GRAPH}.0.id"),
        (workflow(node(id="")), "empty", f"{GRAPH}.0.id"),
        (workflow(node(id="a\nb")), "invalid_text", f"{GRAPH}.0.id"),
        (workflow(node(id="\ud800")), "invalid_text", f"{GRAPH}.0.id"),
        (workflow(node(id="a\x00")), "invalid_text", f"{GRAPH}.0.id"),
        (workflow(node(id="x" * 300_000)), "too_long", f"{GRAPH}.0.id"),
        (workflow(node(required=1)), "wrong_type", f"{GRAPH}.0.required"),
        (workflow(node(parallel="true")), "wrong_type", f"{GRAPH}.0.parallel"),
        (workflow(node(projectTo="system")), "invalid_choice", f"{GRAPH}.0.projectTo"),
        (workflow(node(projectTo=["none"])), "wrong_type", f"{GRAPH}.0.projectTo"),
        (workflow(node(dependsOn="a")), "wrong_type", f"{GRAPH}.0.dependsOn"),
        (workflow(node(dependsOn=["a", "a"])), "duplicate", f"{GRAPH}.0.dependsOn.1"),
        (workflow(node(input=[1])), "wrong_type", f"{GRAPH}.0.input"),
        (workflow(node(input={"n": float("inf")})), "invalid_json", f"{GRAPH}.0.input.n"),
        (workflow(node(input={"n": float("nan")})), "invalid_json", f"{GRAPH}.0.input.n"),
        (workflow(node(input={"t": "\ud800"})), "invalid_text", f"{GRAPH}.0.input.t"),
        (workflow(node(input={"\ud800": 1})), "invalid_text", f"{GRAPH}.0.input"),
        (workflow(node(input={"t": "x" * 10_000_000})), "input_too_large", f"{GRAPH}.0.input"),
        (workflow(node(input={1: 2})), "invalid_json", f"{GRAPH}.0.input"),
        (workflow(node(input={"o": object()})), "invalid_json", f"{GRAPH}.0.input.o"),
        (workflow(node(input={"n": 10**5000})), "invalid_json", f"{GRAPH}.0.input"),
        (workflow(node(input={"n": 1e300})), None, None),  # a finite number: accepted
        (workflow(failurePolicy={"memoryRecall": "skip"}), "invalid_choice", None),
        (workflow(failurePolicy={"memoryIngest": 1e300}), "wrong_type", None),
        (workflow(failurePolicy=[]), "wrong_type", "workflow.failurePolicy"),
    ],
)
def test_each_bad_field_is_a_coded_error_with_its_path(raw, code, path):
    if code is None:
        parse_workflow(raw)
        return
    error = first(raw)
    assert error["code"] == code
    if path is not None:
        assert error["path"] == path
    assert error["message"]


def test_an_error_inside_a_node_names_the_node_once_its_id_is_read():
    error = first(workflow(node("scene", required="yes")))
    assert error["node"] == "scene"
    assert "node" not in first(workflow(node(id=7)))


def test_every_bad_field_is_listed_in_document_order():
    raw = workflow(
        node(id=1),
        node("ok", "read_rule"),
        node("bad", 2),
        visible=["a", "a"],
        failurePolicy={"memoryIngest": "never"},
    )
    paths = [e["path"] for e in errors_of(raw)]
    assert paths == [
        "workflow.visibleCapabilities.1",
        f"{GRAPH}.0.id",
        f"{GRAPH}.2.capability",
        "workflow.failurePolicy.memoryIngest",
    ]


def _nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    ("raw", "ok"),
    [
        (workflow(*[node(f"n{i}") for i in range(wf.MAX_NODES)]), True),
        (workflow(*[node(f"n{i}") for i in range(wf.MAX_NODES + 1)]), False),
        (workflow(visible=[f"c{i}" for i in range(wf.MAX_VISIBLE)]), True),
        (workflow(visible=[f"c{i}" for i in range(wf.MAX_VISIBLE + 1)]), False),
        (workflow(node(id="a" * wf.MAX_NAME)), True),
        (workflow(node(id="a" * (wf.MAX_NAME + 1))), False),
        (workflow(node(capability="c" * wf.MAX_NAME)), True),
        (workflow(node(capability="c" * (wf.MAX_NAME + 1))), False),
        (workflow(node(input=_nested(wf.MAX_INPUT_DEPTH))), True),
        (workflow(node(input=_nested(wf.MAX_INPUT_DEPTH + 1))), False),
        (workflow(node(input={"items": [0] * (wf.MAX_INPUT_ITEMS - 2)})), True),
        (workflow(node(input={"items": [0] * (wf.MAX_INPUT_ITEMS - 1)})), False),
    ],
)
def test_bounds_hold_at_the_limit_and_fail_one_past_it(raw, ok):
    if ok:
        parse_workflow(raw)
    else:
        assert first(raw)["code"] in {"too_many", "too_long", "input_too_large"}


def test_input_size_is_counted_in_bytes_of_its_json():
    overhead = len('{"t": ""}')  # json.dumps writes ", " and ": "
    fits = {"t": "a" * (wf.MAX_INPUT_BYTES - overhead)}
    parse_workflow(workflow(node(input=fits)))
    over = {"t": "a" * (wf.MAX_INPUT_BYTES - overhead + 1)}
    assert first(workflow(node(input=over)))["code"] == "input_too_large"
    wide = {"t": "é" * (wf.MAX_INPUT_BYTES // 2)}  # 2 bytes each in UTF-8
    assert first(workflow(node(input=wide)))["code"] == "input_too_large"


def test_the_errors_are_capped():
    raw = workflow(*[node(id=i) for i in range(wf.MAX_NODES)])
    assert len(errors_of(raw)) == wf.MAX_ERRORS


def test_parsing_does_not_change_the_input():
    raw = workflow(node(input={"a": [1, {"b": 2}]}))
    before = copy.deepcopy(raw)
    parse_workflow(raw)
    assert raw == before


# hostile input: anything JSON-shaped (and a few things that are not) in any position

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e300, -1e300, 0, "", " ", "\ud800", "a\x00", "x" * 70, "x" * 20_000]),
    st.text(max_size=80),
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=20,
)
_names = st.one_of(st.sampled_from(["read_rule", "prepare_scene", "a", "a", "b.c"]), _json)
_hostile_node = st.fixed_dictionaries(
    {"id": _names, "capability": _names},
    optional={
        "input": st.one_of(_json, st.dictionaries(st.text(max_size=8), _json, max_size=4)),
        "dependsOn": st.one_of(_json, st.lists(_names, max_size=4)),
        "required": _json,
        "parallel": _json,
        "projectTo": st.one_of(st.sampled_from(["none", "turn_context", "x"]), _json),
        "surplus": _json,
    },
)
_hostile = st.one_of(
    _json,
    st.fixed_dictionaries(
        {
            "visibleCapabilities": st.one_of(st.lists(_names, max_size=6), _json),
            "executionGraph": st.one_of(
                st.fixed_dictionaries(
                    {"nodes": st.one_of(st.lists(_hostile_node, max_size=5), _json)}
                ),
                _json,
            ),
        },
        optional={
            "failurePolicy": st.one_of(
                _json, st.dictionaries(st.sampled_from(["memoryRecall", "memoryIngest"]), _names)
            )
        },
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hostile)
def test_hostile_input_is_a_valid_spec_or_coded_errors_never_an_exception(raw):
    try:
        spec = parse_workflow(raw)
    except WorkflowInvalid as exc:
        assert exc.errors and len(exc.errors) <= wf.MAX_ERRORS
        for error in exc.errors:
            assert error.code and error.message and error.path.startswith("workflow")
            error.message.encode("utf-8")  # storable and showable: no lone surrogate
            error.path.encode("utf-8")
        return
    assert parse_workflow(spec.to_json()) == spec
