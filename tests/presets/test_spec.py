"""The preset spec: every field rule and every rule across prompts, each with its code."""

from __future__ import annotations

import pytest

from roleplay.prompting import presets as p
from roleplay.prompting.default_preset import DIRECTOR_TEMPLATE
from roleplay.prompting.director_state import (
    DIRECTOR_STATE_HEADER,
    DIRECTOR_STATE_SECTIONS,
    state_format_problems,
)


def prompt(identifier: str, name: str | None = None, **fields) -> dict:
    return {"identifier": identifier, "name": name or identifier, **fields}


def base(*extra: dict) -> list[dict]:
    """The smallest valid preset (the two required markers) plus ``extra`` before them."""
    return [*extra, prompt("chatHistory"), prompt("userInput")]


def template(name: str, content: str, **fields) -> dict:
    fields.setdefault("injection", {"position": "none"})
    return prompt(name, name, content=content, **fields)


def problems(data) -> list[dict]:
    with pytest.raises(p.PresetInvalid) as info:
        p.validate_prompts(data)
    assert info.value.code == "preset_invalid"
    return info.value.details["errors"]


def codes(data) -> list[str]:
    return [e["code"] for e in problems(data)]


def test_the_smallest_preset_is_valid_and_defaults_are_filled():
    prompts = p.validate_prompts(base(prompt("main", content="Hi {{char}}")))
    main = prompts[0]
    assert (main.role, main.enabled, main.injection, main.forbid_overrides) == (
        "system",
        True,
        p.Relative(position="relative"),
        False,
    )
    assert p.dump_prompts(prompts)[0] == {
        "identifier": "main",
        "name": "main",
        "role": "system",
        "content": "Hi {{char}}",
        "enabled": True,
        "injection": {"position": "relative"},
        "forbid_overrides": False,
    }


def test_at_depth_takes_a_depth_and_an_order_defaulting_to_100():
    prompts = p.validate_prompts(base(prompt("x", injection={"position": "at_depth", "depth": 2})))
    assert prompts[0].injection == p.AtDepth(position="at_depth", depth=2, order=100)


@pytest.mark.parametrize(
    ("bad", "code", "loc"),
    [
        ({"colour": "red"}, "unknown_field", "prompts.0.colour"),
        ({"role": "narrator"}, "illegal_role", "prompts.0.role"),
        ({"injection": {"position": "sideways"}}, "illegal_position", "prompts.0.injection"),
        ({"injection": {"position": "relative", "depth": 1}}, "unknown_field", None),
        ({"injection": {"position": "at_depth"}}, "missing_field", "prompts.0.injection.depth"),
        ({"injection": {"position": "at_depth", "depth": -1}}, "out_of_range", None),
        ({"injection": {"position": "at_depth", "depth": 10_001}}, "out_of_range", None),
        ({"injection": {"position": "at_depth", "depth": 1, "order": 10**7}}, "out_of_range", None),
        ({"content": "x" * (p.MAX_CONTENT_CHARS + 1)}, "too_long", "prompts.0.content"),
        ({"name": "n" * (p.MAX_NAME_CHARS + 1)}, "too_long", "prompts.0.name"),
        ({"name": ""}, "too_short", "prompts.0.name"),
        ({"identifier": "has space"}, "invalid_identifier", "prompts.0.identifier"),
        ({"identifier": "i" * 101}, "too_long", "prompts.0.identifier"),
        ({"enabled": "yes"}, "invalid_value", "prompts.0.enabled"),
        ({"content": "nul \x00 here"}, "unstorable_text", "prompts.0.content"),
        ({"content": "lone \ud800"}, "unstorable_text", "prompts.0.content"),
    ],
)
def test_field_rules(bad, code, loc):
    errors = problems(base({**prompt("x"), **bad}))
    assert errors[0]["code"] == code, errors
    if loc:
        assert errors[0]["loc"] == loc
    assert errors[0]["identifier"] == bad.get("identifier", "x")


def test_a_missing_identifier_and_a_non_list():
    assert codes(base({"name": "x"})) == ["missing_field"]
    assert codes({"prompts": []}) == ["invalid_type"]


def test_at_most_200_prompts():
    many = base(*(prompt(f"p{i}") for i in range(p.MAX_PROMPTS - 1)))
    assert codes(many) == ["too_many_prompts"]
    assert len(p.validate_prompts(many[1:])) == p.MAX_PROMPTS


def test_total_size_is_bounded():
    big = [prompt(f"p{i}", content="x" * p.MAX_CONTENT_CHARS) for i in range(11)]
    assert codes(base(*big)) == ["preset_too_large"]


def test_duplicate_identifiers():
    errors = problems(base(prompt("a"), prompt("a")))
    assert [(e["code"], e["loc"]) for e in errors] == [
        ("duplicate_identifier", "prompts.1.identifier")
    ]


@pytest.mark.parametrize("marker", ["chatHistory", "userInput"])
def test_required_markers_missing_twice_or_disabled(marker):
    without = [x for x in base() if x["identifier"] != marker]
    assert codes(without) == ["marker_missing"]
    twice = base(prompt(marker))
    assert "marker_duplicate" in codes(twice)
    off = [dict(x, enabled=False) if x["identifier"] == marker else x for x in base()]
    assert codes(off) == ["marker_disabled"]


def test_user_input_comes_after_chat_history():
    assert codes([prompt("userInput"), prompt("chatHistory")]) == ["marker_order"]


def test_optional_markers_at_most_once_and_in_the_list():
    assert codes(base(prompt("scenario"), prompt("scenario"))) == ["marker_duplicate"]
    depth = prompt("worldInfoBefore", injection={"position": "at_depth", "depth": 1})
    assert codes(base(depth)) == ["marker_not_relative"]
    assert codes(base(prompt("charDescription", injection={"position": "none"}))) == [
        "marker_not_relative"
    ]


def test_marker_content():
    assert codes([prompt("chatHistory", content="x"), prompt("userInput")]) == [
        "marker_content_not_allowed"
    ]
    assert codes(base(prompt("worldInfoAfter", content="[{0}]"))) == ["marker_content_not_allowed"]
    assert codes(base(prompt("charPersonality", content="Personality:"))) == [
        "marker_wrapper_missing_field"
    ]
    wrapped = base(
        prompt("charPersonality", content="{{char}} is {{Personality}}"),
        prompt("dialogueExamples", content="Examples:\n{{mesExamples}}"),
    )
    assert len(p.validate_prompts(wrapped)) == 4


def test_auto_reply_needs_the_language_variable():
    assert codes(base(template("auto_reply", "Suggest three replies."))) == [
        "auto_reply_needs_language"
    ]
    ok = template("auto_reply", "Answer in {{getvar::language}}.")
    assert p.validate_prompts(base(ok))[0].name == "auto_reply"


def test_role_templates_are_unplaced_system_prompts():
    placed = template("orchestrator", "x", injection={"position": "relative"})
    assert codes(base(placed)) == ["template_placed"]
    assert codes(base(template("compactor", "x", role="user"))) == ["template_not_system"]


def test_named_prompts_are_unique():
    errors = problems(
        base(template("compactor", "a"), {**template("compactor", "b"), "identifier": "compactor2"})
    )
    assert [(e["code"], e["loc"]) for e in errors] == [("duplicate_named_prompt", "prompts.1.name")]
    roleplay = [prompt("r1", "roleplay"), prompt("r2", "roleplay")]
    assert codes(base(*roleplay)) == ["duplicate_named_prompt"]


def test_the_roleplay_prompt_is_placed_and_not_a_marker():
    assert codes(base(prompt("r", "roleplay", injection={"position": "none"}))) == [
        "roleplay_not_placed"
    ]
    assert codes(base(prompt("scenario", "roleplay"))) == ["named_prompt_is_marker"]


def test_one_system_prompt_placeholder_without_a_roleplay_prompt():
    one = base(prompt("a", content="{{getvar::systemPrompt}}"))
    assert p.validate_prompts(one)
    two = base(
        prompt("a", content="{{getvar::systemPrompt}}"),
        prompt("b", content="{{getvar::systemPrompt}} again"),
    )
    assert codes(two) == ["ambiguous_character_slot", "ambiguous_character_slot"]
    twice_in_one = base(prompt("a", content="{{getvar::systemPrompt}} {{getvar::systemPrompt}}"))
    assert codes(twice_in_one) == ["ambiguous_character_slot"]
    # With a roleplay prompt, the roleplay prompt is the slot and placeholders are variables.
    assert p.validate_prompts([*two[:2], prompt("r", "roleplay"), *two[2:]])
    # Templates are not Actor prompts: their placeholders do not count.
    unplaced = prompt("c", content="{{getvar::systemPrompt}}", injection={"position": "none"})
    assert p.validate_prompts([*one[:1], unplaced, *one[1:]])


STATE = "\n".join([DIRECTOR_STATE_HEADER, *(f"{s}:" for s in DIRECTOR_STATE_SECTIONS)])


def test_director_template_needs_the_state_header_and_every_section_in_order():
    assert p.validate_prompts(base(template("director", "Write the state:\n" + STATE)))
    no_header = STATE.replace(DIRECTOR_STATE_HEADER, "")
    assert codes(base(template("director", no_header))) == ["director_state_format"]
    missing = STATE.replace("Scene focus:", "")
    errors = problems(base(template("director", missing)))
    assert errors[0]["code"] == "director_state_format"
    assert "missing sections: Scene focus" in errors[0]["msg"]
    lines = STATE.splitlines()
    lines[1], lines[2] = lines[2], lines[1]
    errors = problems(base(template("director", "\n".join(lines))))
    assert "out of order: Character life and near-term goals" in errors[0]["msg"]
    # Sections before the header do not count.
    before = "\n".join(lines[1:]) + "\n" + DIRECTOR_STATE_HEADER
    assert "out of order" in problems(base(template("director", before)))[0]["msg"]


def test_the_shipped_director_template_passes_its_own_check():
    assert state_format_problems(DIRECTOR_TEMPLATE) == ""


def test_every_problem_is_reported_at_once_with_its_prompt():
    errors = problems(
        [
            prompt("userInput"),
            prompt("chatHistory"),
            template("auto_reply", "no language"),
            prompt("a"),
            prompt("a"),
        ]
    )
    assert {(e["code"], e["identifier"]) for e in errors} == {
        ("duplicate_identifier", "a"),
        ("marker_order", "userInput"),
        ("auto_reply_needs_language", "auto_reply"),
    }
    message = p.PresetInvalid([p.Problem("x", "prompts.0", str(i)) for i in range(5)]).message
    assert message.endswith("(and 2 more)")
