"""preActorDirector and its skills: objects, legacy strings, limits, coded errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.failures import Invalid
from roleplay.frontloop.engine import errors
from roleplay.frontloop.engine.config import (
    MAX_CONFIG_ID,
    MAX_PRODUCER_PROMPT,
    DirectorConfig,
    parse_director,
)
from roleplay.frontloop.engine.errors import DirectorInvalid
from roleplay.frontloop.engine.skills import (
    MAX_SKILL_NAME,
    MAX_SKILL_PROMPT,
    MAX_SKILLS,
    Skill,
    parse_skills,
)


def fails(data, code, field):
    with pytest.raises(DirectorInvalid) as caught:
        parse_director(data)
    assert (caught.value.code, caught.value.field) == (code, field), caught.value.message
    assert caught.value.details == {"field": field}
    return caught.value


def test_objects_and_legacy_strings_read_alike():
    config = parse_director(
        {
            "modelConfigId": " controller ",
            "skills": [
                "narrator",
                {"name": "illustrate", "afterActorTools": ["generate_image"], "prompt": "Draw."},
                {"name": "pace", "afterActorTools": [], "prompt": "  "},
            ],
            "imagePromptProducerPrompt": "Write one block.",
        }
    )
    assert config == DirectorConfig(
        model_config_id="controller",
        skills=(
            Skill("narrator"),
            Skill("illustrate", ("generate_image",), "Draw."),
            Skill("pace"),
        ),
        image_prompt_producer_prompt="Write one block.",
    )
    assert config.wants_images and [s.name for s in config.image_skills] == ["illustrate"]
    assert config.to_json()["skills"][0] == {"name": "narrator", "afterActorTools": []}
    assert parse_director(config.to_json()) == config


def test_only_the_model_config_is_required():
    config = parse_director({"modelConfigId": "c"})
    assert config.skills == () and config.image_prompt_producer_prompt is None
    assert not config.wants_images
    assert parse_director({"modelConfigId": "c", "skills": None}).skills == ()
    fails({}, errors.REQUIRED, "preActorDirector.modelConfigId")
    fails({"modelConfigId": "   "}, errors.EMPTY, "preActorDirector.modelConfigId")


def test_the_error_is_a_422_with_a_stable_code():
    error = fails({"modelConfigId": "c", "x": 1}, errors.UNKNOWN_FIELD, "preActorDirector")
    assert isinstance(error, Invalid) and error.kind == "invalid"
    assert error.code in errors.CODES
    assert error.to_dict()["details"] == {"field": "preActorDirector"}


def test_a_duplicated_skill_is_an_error_naming_the_second():
    item = {"name": "illustrate", "afterActorTools": ["generate_image"]}
    fails(
        {"modelConfigId": "c", "skills": [item, item]},
        errors.DUPLICATE,
        "preActorDirector.skills.1.name",
    )
    fails(
        {"modelConfigId": "c", "skills": ["a", " A "]},
        errors.DUPLICATE,
        "preActorDirector.skills.1",
    )
    fails(
        {"modelConfigId": "c", "skills": ["a", {"name": "a"}]},
        errors.DUPLICATE,
        "preActorDirector.skills.1.name",
    )


def test_after_actor_tools_are_known_and_once():
    base = "preActorDirector.skills.0.afterActorTools"
    fails(
        {"modelConfigId": "c", "skills": [{"name": "a", "afterActorTools": ["draw"]}]},
        errors.UNKNOWN_TOOL,
        f"{base}.0",
    )
    fails(
        {"modelConfigId": "c", "skills": [{"name": "a", "afterActorTools": ["actor"]}]},
        errors.UNKNOWN_TOOL,
        f"{base}.0",
    )
    twice = {"name": "a", "afterActorTools": ["generate_image", "generate_image"]}
    fails({"modelConfigId": "c", "skills": [twice]}, errors.DUPLICATE, f"{base}.1")
    many = {"name": "a", "afterActorTools": ["generate_image"] * 9}
    fails({"modelConfigId": "c", "skills": [many]}, errors.TOO_MANY, base)
    fails(
        {"modelConfigId": "c", "skills": [{"prompt": "p"}]},
        errors.REQUIRED,
        "preActorDirector.skills.0.name",
    )
    fails(
        {"modelConfigId": "c", "skills": [{"name": "a", "tools": []}]},
        errors.UNKNOWN_FIELD,
        "preActorDirector.skills.0",
    )


@pytest.mark.parametrize(
    ("count", "ok"), [(MAX_SKILLS - 1, True), (MAX_SKILLS, True), (MAX_SKILLS + 1, False)]
)
def test_at_most_fifty_skills(count, ok):
    data = {"modelConfigId": "c", "skills": [f"s{i}" for i in range(count)]}
    if ok:
        assert len(parse_director(data).skills) == count
    else:
        fails(data, errors.TOO_MANY, "preActorDirector.skills")


@pytest.mark.parametrize(
    ("field", "limit", "make"),
    [
        ("preActorDirector.modelConfigId", MAX_CONFIG_ID, lambda v: {"modelConfigId": v}),
        (
            "preActorDirector.skills.0",
            MAX_SKILL_NAME,
            lambda v: {"modelConfigId": "c", "skills": [v]},
        ),
        (
            "preActorDirector.skills.0.name",
            MAX_SKILL_NAME,
            lambda v: {"modelConfigId": "c", "skills": [{"name": v}]},
        ),
        (
            "preActorDirector.skills.0.prompt",
            MAX_SKILL_PROMPT,
            lambda v: {"modelConfigId": "c", "skills": [{"name": "a", "prompt": v}]},
        ),
        (
            "preActorDirector.imagePromptProducerPrompt",
            MAX_PRODUCER_PROMPT,
            lambda v: {"modelConfigId": "c", "imagePromptProducerPrompt": v},
        ),
    ],
)
def test_text_limits_plus_minus_one(field, limit, make):
    parse_director(make("x" * (limit - 1)))
    parse_director(make("x" * limit))
    parse_director(make("  " + "x" * limit + "  "))  # blanks around do not count
    fails(make("x" * (limit + 1)), errors.TOO_LONG, field)
    fails(make("x" * 300_000), errors.TOO_LONG, field)
    fails(make("a\x00b"), errors.INVALID_TEXT, field)
    fails(make("a\ud800b"), errors.INVALID_TEXT, field)


def test_names_are_one_line():
    fails(
        {"modelConfigId": "c", "skills": ["a\nb"]}, errors.INVALID_TEXT, "preActorDirector.skills.0"
    )
    fails({"modelConfigId": "a\tb"}, errors.INVALID_TEXT, "preActorDirector.modelConfigId")
    # a prompt may have lines
    assert (
        parse_director({"modelConfigId": "c", "skills": [{"name": "a", "prompt": "one\ntwo"}]})
        .skills[0]
        .prompt
        == "one\ntwo"
    )


WRONG = [0, 1.5, True, None, [], {}, "x"]


@pytest.mark.parametrize(
    ("make", "field", "allowed"),
    [
        (lambda v: v, "preActorDirector", ()),
        (lambda v: {"modelConfigId": v}, "preActorDirector.modelConfigId", ("x",)),
        (lambda v: {"modelConfigId": "c", "skills": v}, "preActorDirector.skills", (None, [])),
        (lambda v: {"modelConfigId": "c", "skills": [v]}, "preActorDirector.skills.0", ("x",)),
        (
            lambda v: {"modelConfigId": "c", "skills": [{"name": v}]},
            "preActorDirector.skills.0.name",
            ("x",),
        ),
        (
            lambda v: {"modelConfigId": "c", "skills": [{"name": "a", "afterActorTools": v}]},
            "preActorDirector.skills.0.afterActorTools",
            (None, []),
        ),
        (
            lambda v: {"modelConfigId": "c", "skills": [{"name": "a", "afterActorTools": [v]}]},
            "preActorDirector.skills.0.afterActorTools.0",
            (),
        ),
        (
            lambda v: {"modelConfigId": "c", "skills": [{"name": "a", "prompt": v}]},
            "preActorDirector.skills.0.prompt",
            (None, "x"),
        ),
        (
            lambda v: {"modelConfigId": "c", "imagePromptProducerPrompt": v},
            "preActorDirector.imagePromptProducerPrompt",
            (None, "x"),
        ),
    ],
)
@pytest.mark.parametrize("value", WRONG)
def test_wrong_json_types_in_every_position(make, field, allowed, value):
    data = make(value)
    if any(value == a and type(value) is type(a) for a in allowed):
        parse_director(data)
        return
    with pytest.raises(DirectorInvalid) as caught:
        parse_director(data)
    assert caught.value.field.startswith(field)
    assert caught.value.code in errors.CODES


def test_parse_skills_alone():
    assert parse_skills(None) == ()
    assert parse_skills(["a", {"name": "b"}], "s") == (Skill("a"), Skill("b"))
    with pytest.raises(DirectorInvalid) as caught:
        parse_skills("a", "s")
    assert (caught.value.code, caught.value.field) == (errors.WRONG_TYPE, "s")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
near_valid = st.fixed_dictionaries(
    {"modelConfigId": json_values | st.text()},
    optional={
        "skills": st.lists(
            st.text()
            | st.fixed_dictionaries(
                {"name": st.text() | json_values},
                optional={
                    "afterActorTools": st.lists(
                        st.sampled_from(["generate_image", "x"]) | json_values, max_size=3
                    )
                    | json_values,
                    "prompt": st.text() | json_values,
                },
            ),
            max_size=5,
        )
        | json_values,
        "imagePromptProducerPrompt": st.text() | json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(json_values | near_valid)
def test_any_json_parses_or_fails_with_a_code(data):
    try:
        config = parse_director(data)
    except DirectorInvalid as error:
        assert error.code in errors.CODES
        assert error.field.startswith("preActorDirector")
        json.dumps(error.to_dict())
    else:
        assert parse_director(config.to_json()) == config
