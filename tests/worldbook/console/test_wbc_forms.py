"""The editor's fields turn every native entry into inputs and back without loss."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldbook.engine.schema import KINDS, LOGICS, POSITIONS, EntryIn
from worldbook.forms import (
    EntryForm,
    PlaygroundForm,
    entry_initial,
    join_list,
    parse_history,
    split_list,
)

_ALPHABET = st.sampled_from(list("abcxyz XYZ019,.-_/\\:;!?'\"{}[]()*+|^$龍港の") + ["é"])
_KEY = st.text(_ALPHABET, min_size=1, max_size=20).map(str.strip).filter(bool)
_WORD = st.text(st.sampled_from(list("abcdef-_.0123龍")), min_size=1, max_size=12)
# No CR (browsers post CRLF, the form stores LF) and no NUL (PostgreSQL JSON cannot hold it).
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"))
# The JSON boxes refuse a NUL too, in a value or a key (console.storable.loads).
_STORABLE = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(_STORABLE, max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(_STORABLE, max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_CONDITION = st.one_of(
    st.builds(lambda p, v: {"path": p, "op": "eq", "value": v}, st.just("quest.started"), _JSON),
    st.builds(lambda v: {"path": "a.b", "op": "in", "value": v}, st.lists(_JSON, max_size=3)),
    st.just({"path": "flag", "op": "exists", "value": None}),
)
_OPTIONAL_INT = st.none() | st.integers(0, 100)

ENTRIES = st.fixed_dictionaries(
    {
        "id": _WORD,
        "title": st.text(_ALPHABET, max_size=30),
        "content": _TEXT,
        "keys": st.lists(_KEY, max_size=5),
        "secondary_keys": st.lists(_KEY, max_size=3),
        "requires": st.lists(_WORD, max_size=3),
        "audience": st.lists(_WORD, max_size=3),
        "runtime_requirements": st.lists(_WORD, max_size=2),
        "logic": st.sampled_from(LOGICS),
        "kind": st.sampled_from(KINDS),
        "position": st.sampled_from(POSITIONS),
        "role": st.sampled_from(["system", "user", "assistant"]),
        "probability": st.integers(0, 100),
        "scan_depth": _OPTIONAL_INT,
        "sticky": _OPTIONAL_INT,
        "cooldown": _OPTIONAL_INT,
        "delay": _OPTIONAL_INT,
        "priority": st.integers(-1_000_000, 1_000_000),
        "order": st.integers(-1_000_000, 1_000_000),
        "depth": st.integers(0, 10_000),
        "group_weight": st.integers(1, 1_000_000),
        "conditions": st.lists(_CONDITION, max_size=2),
        "metadata": st.dictionaries(st.text(_STORABLE, max_size=5), _JSON, max_size=3),
        "source": st.none() | st.dictionaries(st.text(_STORABLE, max_size=5), _JSON, max_size=3),
        "conflict_key": st.none() | _WORD,
        "outlet_name": st.none() | _WORD,
        "group": st.text(_ALPHABET, max_size=20),
        "delay_until_recursion": st.booleans() | st.integers(1, 100),
        "use_group_scoring": st.none() | st.booleans(),
        **{
            flag: st.booleans()
            for flag in (
                "enabled",
                "constant",
                "required",
                "selective",
                "case_sensitive",
                "match_whole_words",
                "exclude_recursion",
                "prevent_recursion",
                "group_override",
                "vectorized",
            )
        },
    }
)


def _post_of(form: EntryForm) -> dict[str, str]:
    """What a browser posts for the rendered form (checked boxes only)."""
    data = {}
    for bound in form:
        value = bound.value()
        if bound.widget_type == "checkbox":
            if value:
                data[bound.html_name] = "on"
        else:
            data[bound.html_name] = "" if value is None else str(value)
    return data


def test_the_form_has_every_native_entry_field():
    assert set(EntryForm.base_fields) - {"remove"} == set(EntryIn.model_fields)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ENTRIES)
def test_every_entry_survives_the_form(raw):
    initial = entry_initial(raw)
    rendered = EntryForm(prefix="e0", initial=initial)
    bound = EntryForm(_post_of(rendered), prefix="e0")
    assert bound.is_valid(), bound.errors
    assert EntryIn.model_validate(bound.entry()).model_dump(mode="json") == initial


@given(st.lists(_KEY, max_size=8))
def test_key_lists_round_trip(keys):
    assert split_list(join_list(keys, regex_aware=True), regex_aware=True) == keys


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a, b\nc", ["a", "b", "c"]),
        ("/x{1,3}/i, y", ["/x{1", "3}/i", "y"]),  # not a regex as a whole line
        ("/x{1,3}/i\ny", ["/x{1,3}/i", "y"]),
        ("comma\\, kept", ["comma, kept"]),
        ("  \n , \n", []),
    ],
)
def test_split_list_rules(text, expected):
    assert split_list(text, regex_aware=True) == expected


def test_history_lines():
    assert parse_history("user: hi\nassistant: hello\nsecond line\n\nuser: bye") == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello\nsecond line"},
        {"role": "user", "content": "bye"},
    ]
    assert parse_history("") == []


def test_history_must_start_with_a_role():
    form = PlaygroundForm({"books": [], "query": "q", "history": "no role here"}, book_choices=[])
    assert not form.is_valid()
    assert "first line must start with" in str(form.errors["history"])


def test_fast_rendering_posts_what_django_rendering_posts():
    from tests.worldbook.console.wbc_html import form_pairs
    from worldbook.views.fastfields import render_widget

    initial = entry_initial(
        {
            "id": "x",
            "content": 'a "quoted" <tag> & more\n\nsecond',
            "keys": ["a, b", "/c{1,2}/"],
            "position": "at_depth",
            "use_group_scoring": True,
            "scan_depth": 0,
            "metadata": {"k": "<v>"},
        }
    )
    form = EntryForm(prefix="e0", initial=initial)
    fast = "".join(render_widget(bound) for bound in form)
    slow = "".join(bound.as_widget() for bound in form)
    assert form_pairs(f'<form id="f">{fast}</form>', "f") == form_pairs(
        f'<form id="f">{slow}</form>', "f"
    )
