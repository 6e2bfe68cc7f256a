"""``console.jsontext.loads``: JSON out of a model's answer, however it was wrapped."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.jsontext import loads

OBJ = {"kind": "normal", "targetId": None, "items": ["a", "b"]}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(OBJ),
        "```json\n" + json.dumps(OBJ) + "\n```",
        "```\n" + json.dumps(OBJ, indent=2) + "\n```",
        "Here is the answer:\n" + json.dumps(OBJ) + "\nHope this helps.",
        "  \n" + json.dumps(OBJ) + "  ",
    ],
)
def test_an_object_is_read_however_it_is_wrapped(text):
    assert loads(text) == OBJ


@pytest.mark.parametrize("text", ["", "no json here", "{not json}", "```json\n{broken\n```", None])
def test_an_answer_without_json_is_a_value_error(text):
    with pytest.raises(ValueError):
        loads(text)


@given(st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=5))
def test_any_object_round_trips_bare_or_fenced(value):
    text = json.dumps(value, ensure_ascii=False)
    assert loads(text) == value
    assert loads(f"```json\n{text}\n```") == value
