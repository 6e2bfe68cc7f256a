"""The ``{{...}}`` scan: agrees with a regular-expression reading of the rule, and is linear
(counted in characters searched, not in seconds)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.prompting.macros import MacroContext, expand_macros
from roleplay.prompting.syntax import Macro, iter_macros, outlet_markers, outlet_name, split_name

PROPERTY = settings(max_examples=300, deadline=None, derandomize=True)

# The rule of the module docstring as a regular expression: an opener not followed by a
# third brace, a body with neither ``{{`` nor ``}}``, the first closer. Slow on hostile
# input, which is why the engine does not use it; fine on the short texts below.
REFERENCE = re.compile(r"\{\{(?!\{)((?:(?!\{\{|\}\}).)*)\}\}", re.DOTALL)


class CountingText(str):
    """A text that counts the characters its searches examine."""

    examined = 0

    def find(self, sub, start=0, end=None):  # type: ignore[override]
        found = super().find(sub, start, end)
        stop = len(self) if end is None else end
        CountingText.examined += (found + len(sub) if found >= 0 else stop) - start
        return found

    def rfind(self, sub, start=0, end=None):  # type: ignore[override]
        found = super().rfind(sub, start, end)
        stop = len(self) if end is None else end
        CountingText.examined += stop - (found if found >= 0 else start)
        return found


@PROPERTY
@given(st.text(alphabet="{}ab: \n", max_size=60))
def test_scan_agrees_with_the_reference_expression(text):
    expected = [Macro(m.start(), m.end(), m.group(1)) for m in REFERENCE.finditer(text)]
    assert list(iter_macros(text)) == expected
    for macro in expected:
        assert text[macro.start : macro.end] == "{{" + macro.body + "}}"


@pytest.mark.parametrize(
    "text, bodies",
    [
        ("{{char}}", ["char"]),
        ("{{{char}}}", ["char"]),
        ("{{a {{char}}", ["char"]),
        ("{{a}}}}", ["a"]),
        ("{{}}", [""]),
        ("{{// two\nlines}}", ["// two\nlines"]),
        ("}}{{", []),
        ("{{ unclosed", []),
    ],
)
def test_scan_examples(text, bodies):
    assert [m.body for m in iter_macros(text)] == bodies


@pytest.mark.parametrize(
    "body, expected",
    [
        ("char", ("char", None)),
        (" Char ", ("char", None)),
        ("getVar::Name", ("getvar", "Name")),
        ("random:a,b", ("random", "a,b")),
        ("roll 1d20", ("roll", "1d20")),
        ("Roll:1d20", ("roll", "1d20")),
        ("outlet::a::b", ("outlet", "a::b")),
    ],
)
def test_split_name(body, expected):
    assert split_name(body) == expected


def test_outlet_names_keep_their_case_and_need_a_name():
    assert outlet_name("OUTLET:: Lore ") == "Lore"
    assert outlet_name("outlet::") is None
    assert outlet_name("outlet") is None
    assert outlet_name("getvar::x") is None
    assert [slot for _, slot in outlet_markers("{{outlet::a}} {{char}} {{Outlet:b}}")] == ["a", "b"]


ADVERSARIAL = {
    "unclosed openers": "{{" * 100_000,
    "openers then one closer": "{{" * 100_000 + "}}",
    "closers only": "}}" * 100_000,
    "openers then closers": "{{" * 50_000 + "}}" * 50_000,
    "many macros": "{{char}}" * 25_000,
    "unknown macros": "{{nope}}x" * 25_000,
    "opener runs between text": ("{{{{{{ a " * 20_000) + "}}",
    "nested openers": "{{a {{b {{c " * 10_000 + "}}" * 3,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_the_scan_examines_each_character_a_bounded_number_of_times(name):
    text = CountingText(ADVERSARIAL[name])
    CountingText.examined = 0
    list(iter_macros(text))
    assert CountingText.examined <= 3 * len(text) + 8


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_expansion_scans_linearly(name):
    text = CountingText(ADVERSARIAL[name])
    CountingText.examined = 0
    result = expand_macros(text, MacroContext(char="Ann"))
    assert CountingText.examined <= 3 * len(text) + 8
    assert "{{char}}" not in result.text


def test_a_megabyte_of_hostile_text_expands():
    text = ("{{" * 1000 + "{{char}}" + "}}" * 10 + "{{roll::" + "9" * 500 + "}}") * 400
    assert len(text) > 1_000_000
    result = expand_macros(text, MacroContext(char="Ann", seed="s"))
    assert result.text.count("Ann") == 400
    assert result.unknown == ("{{roll::" + "9" * 500 + "}}",)
