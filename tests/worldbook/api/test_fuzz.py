"""Hypothesis fuzz of request bodies: never a 5xx, and a rejected request writes nothing.

Bodies are either arbitrary JSON or a valid body with a few fields replaced, removed or added
(which reaches deeper validation than random JSON does). Strings include NUL and non-ASCII
text, numbers include values far outside every column's range.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.worldbook.api.wb_api_helpers import book, counts, create, entry

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40) | st.sampled_from(
    ["", "\x00", "a\x00b", "铜钥匙", "/(?<=a)b/", "/[a-z]+/i", "{{char}}", "x" * 301]
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, -1, 2**31, 2**63, 1_000_001, 200_001])
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
    max_leaves=12,
)

BOOK_FIELDS = ["name", "description", "entries", "metadata", "tenant_id"]
ENTRY_FIELDS = [
    "id", "content", "keys", "secondary_keys", "requires", "conditions", "position", "depth",
    "probability", "priority", "order", "sticky", "cooldown", "delay", "group", "audience",
    "kind", "role", "outlet_name", "scan_depth", "logic", "selective", "metadata", "bogus",
]  # fmt: skip
SELECT_FIELDS = [
    "books", "query", "history", "state", "audience", "strategy", "scan_depth", "token_budget",
    "constant_budget_ratio", "max_entries", "max_recursion_rounds", "seed", "template_vars",
    "placement_capabilities", "conversation_id", "message_index", "hybrid_threshold", "bogus",
]  # fmt: skip
SEARCH_FIELDS = ["query", "books", "mode", "limit", "bogus"]
BINDING_FIELDS = ["book_id", "revision", "position", "enabled", "bogus"]


def mutations(fields):
    """A list of (field, value) edits; value ``...`` deletes the field."""
    edit = st.tuples(st.sampled_from(fields), json_values | st.just(...))
    return st.lists(edit, min_size=1, max_size=3)


def apply(target: dict, edits) -> dict:
    out = dict(target)
    for field, value in edits:
        if value is ...:
            out.pop(field, None)
        else:
            out[field] = value
    return out


def assert_sane(res, before) -> None:
    assert res.status_code < 500, res.content
    if res.status_code >= 400:
        err = res.json()["error"]
        assert set(err) == {"code", "message", "details"}
        assert counts() == before, res.content


def post_json(api, path: str, body):
    return api.generic("POST", path, json.dumps(body), content_type="application/json")


VALID_BOOK = book(
    "fuzz",
    entry("a", "Alpha lore.", keys=["alpha"], sticky=1),
    entry("b", "Beta lore.", keys=["beta"], requires=["a"]),
)


@FUZZ
@given(
    body=json_values
    | st.builds(apply, st.just(VALID_BOOK), mutations(BOOK_FIELDS))
    | st.builds(
        lambda edits: {**VALID_BOOK, "entries": [apply(VALID_BOOK["entries"][0], edits)]},
        mutations(ENTRY_FIELDS),
    )
)
def test_fuzz_create_book(api, body):
    before = counts()
    res = post_json(api, "/v1/books", body)
    assert_sane(res, before)
    if res.status_code == 201:
        book_id = res.json()["books"][0]["book_id"]
        assert api.get(f"/v1/books/{book_id}").status_code == 200


@pytest.fixture
def fuzz_book(api):
    return create(api, VALID_BOOK)["book_id"]


@FUZZ
@given(data=st.data())
def test_fuzz_select(api, fuzz_book, data):
    base = {
        "books": [{"book_id": fuzz_book}],
        "query": "alpha beta",
        "conversation_id": "fuzz",
        "message_index": 1,
    }
    body = data.draw(
        json_values
        | st.builds(apply, st.just(base), mutations(SELECT_FIELDS))
        | st.builds(
            lambda edits: {**base, "books": [apply(base["books"][0], edits)]},
            mutations(["book_id", "revision", "bogus"]),
        )
    )
    before = counts()
    assert_sane(post_json(api, "/v1/context/select", body), before)


@FUZZ
@given(data=st.data())
def test_fuzz_search(api, fuzz_book, data):
    base = {"books": [{"book_id": fuzz_book}], "query": "alpha", "mode": "hybrid"}
    body = data.draw(
        json_values
        | st.builds(apply, st.just(base), mutations(SEARCH_FIELDS))
        | st.builds(
            lambda edits: {**base, "books": [apply(base["books"][0], edits)]},
            mutations(["book_id", "revision", "bogus"]),
        )
    )
    before = counts()
    assert_sane(post_json(api, "/v1/search", body), before)


@FUZZ
@given(data=st.data())
def test_fuzz_prompt_bindings(api, fuzz_book, data):
    base = {"bindings": [{"book_id": fuzz_book, "revision": 1}]}
    body = data.draw(
        json_values
        | st.builds(apply, st.just(base), mutations(["bindings", "bogus"]))
        | st.builds(
            lambda edits: {"bindings": [apply(base["bindings"][0], edits)]},
            mutations(BINDING_FIELDS),
        )
    )
    prompt_id = data.draw(st.sampled_from(["mira", ""]) | text)
    url = f"/v1/prompt-bindings?prompt_id={quote(prompt_id)}"
    before = counts()
    res = api.generic("PUT", url, json.dumps(body), content_type="application/json")
    assert_sane(res, before)
    for path in (url, url.replace("prompt-bindings?", "prompt-bindings/resolve?")):
        assert api.get(path).status_code < 500
