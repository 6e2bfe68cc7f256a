"""The tools offered to the controller, and reading its calls against them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.frontloop.engine import requests as rq
from roleplay.frontloop.engine.config import parse_director
from roleplay.frontloop.engine.menu import Menu, menu_for
from roleplay.frontloop.engine.requests import (
    ActorStep,
    DioStep,
    ImageStep,
    OverStep,
    Rejection,
    ToolRequest,
    read_request,
)

IMAGES = parse_director(
    {"modelConfigId": "c", "skills": [{"name": "draw", "afterActorTools": ["generate_image"]}]}
)
PLAIN = parse_director({"modelConfigId": "c", "skills": ["draw"]})
FULL = Menu(("actor", "generate_image", "schedule_dio", "over"))


@pytest.mark.parametrize(
    ("config", "image_config", "dio", "names"),
    [
        (PLAIN, False, False, ("actor", "over")),
        (PLAIN, True, False, ("actor", "over")),  # no skill asks for images
        (IMAGES, False, False, ("actor", "over")),  # no image config to execute them
        (IMAGES, True, False, ("actor", "generate_image", "over")),
        (PLAIN, False, True, ("actor", "schedule_dio", "over")),
        (IMAGES, True, True, ("actor", "generate_image", "schedule_dio", "over")),
    ],
)
def test_menu_composition(config, image_config, dio, names):
    menu = menu_for(config, image_config=image_config, dio=dio)
    assert menu.names == names
    assert menu.dio is dio
    assert [spec["function"]["name"] for spec in menu.specs()] == list(names)


def test_specs_are_openai_function_tools_and_fresh_copies():
    specs = FULL.specs()
    for spec in specs:
        assert spec["type"] == "function"
        assert spec["function"]["parameters"]["type"] == "object"
        assert spec["function"]["parameters"]["additionalProperties"] is False
        assert spec["function"]["description"]
    actor = specs[0]["function"]["parameters"]["properties"]["responseMode"]
    assert actor["enum"] == ["complete", "visual_beat"]
    specs[0]["function"]["parameters"]["properties"].clear()
    assert FULL.specs()[0]["function"]["parameters"]["properties"]  # not shared
    assert json.loads(json.dumps(FULL.specs())) == FULL.specs()


def req(name, arguments="{}", actor_steps=1, menu=FULL):
    return read_request(ToolRequest(name, arguments), menu, actor_steps=actor_steps)


def test_accepted_steps():
    assert req("actor") == ActorStep("complete")
    assert req("actor", "") == ActorStep("complete")
    assert req("actor", None) == ActorStep("complete")
    assert req("actor", '{"responseMode": "visual_beat"}') == ActorStep("visual_beat")
    assert req("actor", {"responseMode": " Visual_Beat "}) == ActorStep("visual_beat")
    assert req("actor", '{"responseMode": null}') == ActorStep("complete")
    assert req("generate_image") == ImageStep()
    assert req("schedule_dio", "  ") == DioStep()
    assert req("over", "{}", actor_steps=1) == OverStep()


@pytest.mark.parametrize(("actor_steps", "legal"), [(0, False), (1, True), (2, True)])
def test_over_only_after_an_actor_step(actor_steps, legal):
    result = req("over", actor_steps=actor_steps)
    if legal:
        assert result == OverStep()
    else:
        assert isinstance(result, Rejection) and result.code == rq.OVER_BEFORE_ACTOR


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        ("draw", "{}", rq.UNKNOWN_TOOL),
        ("Actor", "{}", rq.UNKNOWN_TOOL),
        (None, "{}", rq.UNKNOWN_TOOL),
        (7, "{}", rq.UNKNOWN_TOOL),
        (["actor"], "{}", rq.UNKNOWN_TOOL),
        ("a" * 300_000, "{}", rq.UNKNOWN_TOOL),
        ("actor\x00", "{}", rq.UNKNOWN_TOOL),
        ("\ud800", "{}", rq.UNKNOWN_TOOL),
        ("actor", "{not json", rq.MALFORMED_ARGUMENTS),
        ("actor", "[]", rq.MALFORMED_ARGUMENTS),
        ("actor", "null", rq.MALFORMED_ARGUMENTS),
        ("actor", '"complete"', rq.MALFORMED_ARGUMENTS),
        ("actor", "1", rq.MALFORMED_ARGUMENTS),
        ("actor", '{"responseMode": NaN}', rq.MALFORMED_ARGUMENTS),
        ("actor", '{"a": 1, "a": 2}', rq.MALFORMED_ARGUMENTS),
        ("actor", "[" * 1_990 + "]" * 1_990, rq.MALFORMED_ARGUMENTS),
        ("actor", 42, rq.MALFORMED_ARGUMENTS),
        ("actor", ["x"], rq.MALFORMED_ARGUMENTS),
        ("actor", "{" + " " * 4_000 + "}", rq.ARGUMENTS_TOO_LONG),
        ("actor", '{"responseMode": "complete", "maxTokens": 5}', rq.UNKNOWN_ARGUMENT),
        ("actor", '{"responseMode": 1}', rq.WRONG_ARGUMENT_TYPE),
        ("actor", '{"responseMode": true}', rq.WRONG_ARGUMENT_TYPE),
        ("actor", '{"responseMode": ["complete"]}', rq.WRONG_ARGUMENT_TYPE),
        ("actor", '{"responseMode": {}}', rq.WRONG_ARGUMENT_TYPE),
        ("actor", '{"responseMode": "poem"}', rq.BAD_ARGUMENT_VALUE),
        ("actor", {"responseMode": "x" * 300_000}, rq.BAD_ARGUMENT_VALUE),
        ("over", '{"now": true}', rq.UNKNOWN_ARGUMENT),
        ("generate_image", '{"segment": 0}', rq.UNKNOWN_ARGUMENT),
        ("schedule_dio", '{"x": null}', rq.UNKNOWN_ARGUMENT),
        ("over", "[]", rq.MALFORMED_ARGUMENTS),
    ],
)
def test_rejections(name, arguments, code):
    result = req(name, arguments)
    assert isinstance(result, Rejection), result
    assert result.code == code
    assert result.code in rq.REJECTION_CODES
    stored = json.dumps(result.to_json(), ensure_ascii=False)
    stored.encode("utf-8")  # no lone surrogate
    assert "\\u0000" not in stored
    assert len(stored) < 1_000


def test_arguments_at_the_length_limit():
    padded = '{"responseMode": "complete"}'
    exact = padded[:-1] + " " * (rq.MAX_ARGUMENTS_CHARS - len(padded)) + "}"
    assert len(exact) == rq.MAX_ARGUMENTS_CHARS
    assert req("actor", exact) == ActorStep("complete")
    over = exact[:-1] + " }"
    assert req("actor", over).code == rq.ARGUMENTS_TOO_LONG


def test_a_tool_not_on_the_menu_is_refused():
    menu = Menu(("actor", "over"))
    for name in ("generate_image", "schedule_dio"):
        result = req(name, menu=menu)
        assert isinstance(result, Rejection) and result.code == rq.NOT_OFFERED


def test_no_tool_call():
    assert read_request(None, FULL, actor_steps=0).code == rq.NO_TOOL_CALL
    assert read_request("actor", FULL, actor_steps=0).code == rq.NO_TOOL_CALL  # type: ignore[arg-type]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None)
@given(
    name=st.sampled_from(["actor", "over", "generate_image", "schedule_dio"]) | json_values,
    arguments=st.text() | json_values | json_values.map(json.dumps),
    actor_steps=st.integers(0, 3),
)
def test_reading_never_raises(name, arguments, actor_steps):
    result = read_request(ToolRequest(name, arguments), FULL, actor_steps=actor_steps)
    if isinstance(result, Rejection):
        assert result.code in rq.REJECTION_CODES
        json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8")
    else:
        assert result.tool == name
