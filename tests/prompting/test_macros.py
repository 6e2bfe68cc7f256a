"""The macro engine: every macro, case, unknown ones, seeded chance, one level of nesting."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.prompting.macros import (
    MACRO_INVALID_INPUT,
    MacroContext,
    MacroInputError,
    expand_macros,
    referenced_variables,
)

NOW = datetime(2025, 1, 5, 15, 7)
CONTEXT = MacroContext(
    char="Mira",
    user="Tom",
    persona="a tired courier",
    description="{{char}} guards the gate for {{user}}.",
    personality="stern",
    scenario="night at the gate",
    mes_examples="<START>\n{{char}}: Halt.",
    variables={"language": "French", "dioCompiledPrompt": "compiled", "Case": "upper"},
    now=NOW,
    seed="turn-1",
)


def expand(text: str, context: MacroContext = CONTEXT) -> str:
    return expand_macros(text, context).text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("{{char}}", "Mira"),
        ("{{user}}", "Tom"),
        ("{{persona}}", "a tired courier"),
        ("{{description}}", "Mira guards the gate for Tom."),
        ("{{personality}}", "stern"),
        ("{{scenario}}", "night at the gate"),
        ("{{mesExamples}}", "<START>\nMira: Halt."),
        ("{{getvar::language}}", "French"),
        ("{{getvar:: language }}", "French"),
        ("{{getvar::dioCompiledPrompt}}", "compiled"),
        ("{{time}}", "3:07 PM"),
        ("{{date}}", "January 5, 2025"),
        ("{{weekday}}", "Sunday"),
        ("{{isotime}}", "15:07"),
        ("{{isodate}}", "2025-01-05"),
        ("a{{newline}}b", "a\nb"),
        ("a{{noop}}b", "ab"),
        ("a{{// a comment}}b", "ab"),
        ("a{{//\nspans lines: and colons}}b", "ab"),
        ("{{outlet::lore}}", "{{outlet::lore}}"),
    ],
)
def test_each_macro(text, expected):
    assert expand(text) == expected


@pytest.mark.parametrize("text", ["{{Char}}", "{{CHAR}}", "{{ char }}", "{{cHaR}}", "{{ Char}}"])
def test_names_are_case_insensitive(text):
    assert expand(text) == "Mira"


def test_long_names_are_case_insensitive_but_variable_names_are_not():
    assert expand("{{MESEXAMPLES}}|{{GetVar::language}}|{{getvar::Case}}") == (
        "<START>\nMira: Halt.|French|upper"
    )
    assert expand_macros("{{getvar::case}}", CONTEXT).missing_variables == ("case",)


@pytest.mark.parametrize(
    "now, time, date",
    [
        (datetime(2024, 2, 29, 0, 5), "12:05 AM", "February 29, 2024"),
        (datetime(2024, 12, 31, 12, 0), "12:00 PM", "December 31, 2024"),
        (datetime(2024, 7, 1, 23, 59), "11:59 PM", "July 1, 2024"),
    ],
)
def test_clock_edges(now, time, date):
    context = MacroContext(now=now)
    assert expand("{{time}} / {{date}}", context) == f"{time} / {date}"


def test_clock_macros_without_a_clock_are_left_and_reported():
    result = expand_macros("at {{time}} on {{date}}", MacroContext())
    assert result.text == "at {{time}} on {{date}}"
    assert result.unknown == ("{{time}}", "{{date}}")


def test_unknown_and_malformed_macros_are_left_as_written_and_listed_once():
    text = (
        "{{foo}} {{Foo::bar}} {{char::x}} {{getvar}} {{getvar:: }} {{random}} {{roll::1d0}}"
        " {{roll::abc}} {{roll::101d6}} {{roll::1d2000000}} {{roll::1d6+2000000}} {{outlet::}}"
        " {{}} {{foo}} {{time::x}}"
    )
    result = expand_macros(text, CONTEXT)
    assert result.text == text
    assert result.unknown == (
        "{{foo}}", "{{Foo::bar}}", "{{char::x}}", "{{getvar}}", "{{getvar:: }}", "{{random}}",
        "{{roll::1d0}}", "{{roll::abc}}", "{{roll::101d6}}", "{{roll::1d2000000}}",
        "{{roll::1d6+2000000}}", "{{outlet::}}", "{{}}", "{{time::x}}",
    )  # fmt: skip
    assert result.used == ()


def test_result_reports_used_macros_outlets_and_missing_variables():
    result = expand_macros(
        "{{user}} {{outlet::lore}} {{getvar::mood}} {{Char}} {{outlet:: Lore }} {{outlet::lore}}"
        " {{getvar::mood}} {{// x}}",
        CONTEXT,
    )
    assert result.used == ("user", "outlet", "getvar", "char", "//")
    assert result.outlets == ("lore", "Lore")
    assert result.missing_variables == ("mood",)
    assert result.text == "Tom {{outlet::lore}}  Mira {{outlet:: Lore }} {{outlet::lore}}  "


def test_a_missing_variable_expands_to_nothing():
    assert expand("[{{getvar::absent}}]") == "[]"


# --- random and roll --------------------------------------------------------------------------


def test_random_picks_one_of_the_options():
    for seed in map(str, range(40)):
        context = MacroContext(seed=seed)
        assert expand("{{random::a::b::c}}", context) in {"a", "b", "c"}
        assert expand("{{random:x, y ,z}}", context) in {"x", "y", "z"}
        assert expand("{{random::one,two}}", context) in {"one", "two"}
        assert expand("{{random:a\\,b,c}}", context) in {"a,b", "c"}
        assert expand("{{random::only}}", context) == "only"


def test_random_covers_every_option_over_seeds():
    seen = {expand("{{random::a::b::c}}", MacroContext(seed=str(i))) for i in range(60)}
    assert seen == {"a", "b", "c"}


@pytest.mark.parametrize(
    "formula, low, high",
    [
        ("1d20", 1, 20),
        ("d6", 1, 6),
        ("20", 1, 20),
        ("3d6+2", 5, 20),
        ("2D4-3", -1, 5),
        ("1d1", 1, 1),
        (" 2d6 + 1 ", 3, 13),
        ("100d1000000", 100, 100_000_000),
    ],
)
def test_roll_stays_within_its_dice(formula, low, high):
    values = [int(expand(f"{{{{roll::{formula}}}}}", MacroContext(seed=str(i)))) for i in range(30)]
    assert all(low <= value <= high for value in values)


@pytest.mark.parametrize("text", ["{{roll::1d20}}", "{{roll:1d20}}", "{{roll 1d20}}"])
def test_roll_spellings(text):
    assert 1 <= int(expand(text)) <= 20


CHANCE = "{{roll::1d1000000}} {{random::" + "::".join(map(str, range(1000))) + "}}"


def test_same_seed_same_expansion_for_a_retry():
    first = expand(CHANCE, MacroContext(seed="turn-42"))
    again = expand(CHANCE, MacroContext(seed="turn-42", char="unrelated"))
    assert first == again


def test_different_seeds_draw_differently():
    draws = {expand(CHANCE, MacroContext(seed=f"turn-{i}")) for i in range(5)}
    assert len(draws) == 5


def test_each_occurrence_draws_on_its_own():
    values = expand("{{roll::1d1000000}} {{roll::1d1000000}}", MacroContext(seed="s")).split()
    assert values[0] != values[1]


def test_the_draws_are_pinned():
    """The seed hashing is part of the contract: a retry after an upgrade expands alike."""
    context = MacroContext(seed="turn-1")
    assert expand("{{roll::1d1000000}} {{random::a::b::c::d}}", context) == pinned_draws()


def pinned_draws() -> str:
    import random

    first = random.Random("turn-1\x1f1").randint(1, 1_000_000)
    second = "abcd"[random.Random("turn-1\x1f2").randrange(4)]
    return f"{first} {second}"


# --- one level of nesting ---------------------------------------------------------------------


def test_card_fields_expand_their_macros_once():
    context = MacroContext(
        char="Mira",
        user="Tom",
        description="{{char}} and {{user}}; {{description}} {{persona}} {{getvar::v}}",
        persona="{{scenario}}",
        variables={"v": "{{char}}"},
    )
    result = expand_macros("{{description}}|{{persona}}", context)
    assert result.text == "Mira and Tom; {{description}} {{persona}} {{char}}|{{scenario}}"
    assert result.unknown == ("{{description}}", "{{persona}}", "{{scenario}}")


def test_inserted_values_are_never_rescanned():
    context = MacroContext(
        char="{{user}}",
        user="{{char}}",
        variables={"x": "{{getvar::x}}", "y": "{{roll::1d6}}", "o": "{{outlet::a}}"},
    )
    result = expand_macros("{{char}} {{user}} {{getvar::x}} {{getvar::y}} {{getvar::o}}", context)
    assert result.text == "{{user}} {{char}} {{getvar::x}} {{roll::1d6}} {{outlet::a}}"
    assert result.outlets == ()


def test_a_card_field_used_twice_is_expanded_once():
    context = MacroContext(description="{{roll::1d1000000}}", seed="s")
    first, second = expand("{{description}} {{description}}", context).split()
    assert first == second


def test_outlets_inside_card_fields_are_kept_and_reported():
    result = expand_macros("{{scenario}}", MacroContext(scenario="x {{outlet::deep}}"))
    assert result.text == "x {{outlet::deep}}"
    assert result.outlets == ("deep",)


# --- inputs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"char": 3}, "char"),
        ({"description": None}, "description"),
        ({"variables": {"language": 1}}, "variables.language"),
        ({"variables": {1: "x"}}, "variables"),
        ({"variables": ["x"]}, "variables"),
        ({"now": "2025-01-01"}, "now"),
    ],
)
def test_context_refuses_what_is_not_text(kwargs, field):
    with pytest.raises(MacroInputError) as caught:
        MacroContext(**kwargs)
    assert caught.value.code == MACRO_INVALID_INPUT
    assert caught.value.details == {"field": field}
    json.dumps(caught.value.to_dict())


def test_text_must_be_text():
    with pytest.raises(MacroInputError):
        expand_macros(b"{{char}}", CONTEXT)  # type: ignore[arg-type]


def test_context_variables_are_copied():
    variables = {"a": "1"}
    context = MacroContext(variables=variables)
    variables["a"] = "2"
    assert expand("{{getvar::a}}", context) == "1"


def test_referenced_variables_lists_every_occurrence():
    text = "{{getvar::language}} {{GETVAR:: systemPrompt }} {{getvar::}} {{getvar::language}}"
    assert referenced_variables(text) == ("language", "systemPrompt", "language")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(["a", " ", "{", "}", ":", "\n", "é"]), max_size=80))
def test_text_without_known_macros_is_returned_unchanged(text):
    result = expand_macros(text, MacroContext())
    assert result.text == text
    assert result.used == ()
