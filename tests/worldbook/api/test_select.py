"""``POST /v1/context/select`` over stored books: response shape, decisions, errors, degraded
hybrid selection without an index."""

from __future__ import annotations

import pytest

from tests.worldbook.api.wb_api_helpers import (
    book,
    counts,
    create,
    entry,
    error,
    publish,
    select_body,
)

pytestmark = pytest.mark.django_db

RESPONSE_KEYS = {
    "blocks",
    "context",
    "decisions",
    "snapshot",
    "token_count",
    "token_budget",
    "tokenizer",
    "token_scope",
    "degraded",
    "policy_version",
    "prompt_hash",
    "selection_fingerprint",
    "duration_ms",
}

MIXED = book(
    "Mixed",
    entry("world", "Greyport runs on steam.", constant=True),
    entry("gate", "{{char}} guards the gate for {{user}}.", keys=["gate"]),
    entry("tower", "The tower is closed.", keys=["tower"]),
    entry("off", "Disabled.", keys=["gate"], enabled=False),
    entry("narrator", "Narrator only.", keys=["gate"], audience=["narrator"]),
    entry(
        "quest",
        "The quest has begun.",
        keys=["gate"],
        conditions=[{"path": "quest.started", "op": "eq", "value": True}],
    ),
    entry("panel", "Status panel.", keys=["gate"], runtime_requirements=["ejs"]),
    entry("note", "Author's note.", keys=["gate"], position="author_note_top"),
    entry("never", "Never fires.", keys=["gate"], probability=0),
)


def select(api, body):
    return api.post("/v1/context/select", body, format="json")


def test_response_shape_and_a_decision_for_every_entry(api):
    book_id = create(api, MIXED)["book_id"]
    body = select_body(
        book_id, "I walk to the gate.", template_vars={"char": "Mira", "user": "Ann"}, seed="s1"
    )
    res = select(api, body)
    assert res.status_code == 200, res.content
    out = res.json()
    assert set(out) == RESPONSE_KEYS
    assert out["tokenizer"] == "cl100k_base" and out["token_budget"] == 1500
    assert 0 < out["token_count"] <= out["token_budget"]
    assert out["snapshot"]["books"][0]["book_id"] == book_id
    assert out["snapshot"]["books"][0]["revision"] == 1
    assert out["degraded"] == []

    reasons = {d["entry_id"]: d["reason"] for d in out["decisions"]}
    assert reasons == {
        "world": "constant",
        "gate": "keyword",
        "tower": "not_triggered",
        "off": "disabled",
        "narrator": "audience_mismatch",
        "quest": "condition_failed",
        "panel": "runtime_blocked",
        "note": "placement_unsupported",
        "never": "probability_failed",
    }
    selected = {d["entry_id"] for d in out["decisions"] if d["selected"]}
    assert selected == {b["entry_id"] for b in out["blocks"]} == {"world", "gate"}
    gate = next(b for b in out["blocks"] if b["entry_id"] == "gate")
    assert gate["content"] == "Mira guards the gate for Ann."
    assert gate["id"] == f"{book_id}:1:gate"
    assert set(gate) == {
        "id",
        "book_id",
        "revision",
        "entry_id",
        "title",
        "content",
        "position",
        "depth",
        "role",
        "order",
        "reason",
    }
    assert "Mira guards the gate" in out["context"]


def test_state_capabilities_and_template_vars_change_the_decisions(api):
    book_id = create(api, MIXED)["book_id"]
    body = select_body(
        book_id,
        "the gate",
        state={"quest": {"started": True}},
        placement_capabilities=["before_character", "author_note_top"],
        template_vars={"char": "Mira"},
    )
    out = select(api, body).json()
    reasons = {d["entry_id"]: d["reason"] for d in out["decisions"]}
    assert reasons["quest"] == "keyword" and reasons["note"] == "keyword"
    assert reasons["gate"] == "missing_template_var"


def test_selection_is_deterministic_for_equal_inputs(api):
    book_id = create(api, MIXED)["book_id"]
    body = select_body(book_id, "gate and tower", seed="turn-7")
    first, second = select(api, body).json(), select(api, body).json()
    for key in ("blocks", "decisions", "context", "selection_fingerprint", "prompt_hash"):
        assert first[key] == second[key]


def test_budget_is_never_exceeded_and_drops_are_explained(api):
    entries = [entry(f"e{i}", "lore " * 80, keys=["lore"]) for i in range(10)]
    book_id = create(api, book("Budget", *entries))["book_id"]
    out = select(api, select_body(book_id, "lore", token_budget=200)).json()
    assert out["token_count"] <= 200
    reasons = [d["reason"] for d in out["decisions"]]
    assert "budget_dropped" in reasons and "keyword" in reasons


def test_required_entry_that_cannot_fit_is_an_error(api):
    book_id = create(api, book("Req", entry("must", "word " * 400, required=True)))["book_id"]
    res = select(api, select_body(book_id, "anything", token_budget=50))
    assert res.status_code == 422
    err = error(res)
    assert err["code"] == "required_over_budget" and "must" in err["details"]["entry"]


@pytest.mark.parametrize(
    ("entries", "code", "named"),
    [
        ([entry("note", "n", required=True, position="author_note_top")], "required_unplaceable",
         "note"),
        (
            [
                entry("one", "1", required=True, conflict_key="k"),
                entry("two", "2", required=True, conflict_key="k"),
            ],
            "required_conflict",
            "one",
        ),
        (
            [entry("need", "n", required=True, requires=["off"]), entry("off", "o", enabled=False)],
            "dependency_broken",
            "need",
        ),
    ],
)  # fmt: skip
def test_required_entries_that_cannot_be_honoured_are_errors(api, entries, code, named):
    book_id = create(api, book("Req", *entries))["book_id"]
    before = counts()
    res = select(api, select_body(book_id, "q", conversation_id="c", message_index=1))
    assert res.status_code == 422
    err = error(res)
    assert err["code"] == code and named in str(err["details"]), err
    assert counts() == before  # no timed state written for a failed selection


def test_dependencies_come_along(api):
    payload = book(
        "Deps", entry("base", "Base facts."), entry("top", "Top.", keys=["top"], requires=["base"])
    )
    book_id = create(api, payload)["book_id"]
    out = select(api, select_body(book_id, "top")).json()
    reasons = {b["entry_id"]: b["reason"] for b in out["blocks"]}
    assert reasons == {"base": "dependency", "top": "keyword"}


def test_pinned_revision_and_head(api):
    book_id = create(api, book("v", entry("a", "old", keys=["k"])))["book_id"]
    assert publish(api, book_id, book("v", entry("a", "new", keys=["k"])), 1).status_code == 201
    head = select(api, select_body(book_id, "k")).json()
    assert head["blocks"][0]["content"] == "new" and head["blocks"][0]["revision"] == 2
    pinned = {"books": [{"book_id": book_id, "revision": 1}], "query": "k"}
    old = select(api, pinned).json()
    assert old["blocks"][0]["content"] == "old" and old["blocks"][0]["id"] == f"{book_id}:1:a"


def test_book_id_spelling_does_not_matter(api):
    book_id = create(api, book("u", entry("a", "text", keys=["k"])))["book_id"]
    res = select(api, select_body(book_id.upper(), "k"))
    assert res.status_code == 200, res.content
    assert res.json()["blocks"][0]["book_id"] == book_id
    both = {"books": [{"book_id": book_id}, {"book_id": book_id.upper()}], "query": "k"}
    res = select(api, both)
    assert res.status_code == 422 and error(res)["code"] == "validation_error"


def test_hybrid_without_an_index_degrades_to_lexical(api):
    book_id = create(api, book("h", entry("a", "The lighthouse keeper.", keys=["zzz"])))["book_id"]
    out = select(api, select_body(book_id, "lighthouse keeper", strategy="hybrid")).json()
    assert out["degraded"] == [
        {
            "code": "vector_index_not_ready",
            "book_id": book_id,
            "revision": 1,
            "message": "no ready vector index for this exact revision; lexical only",
        }
    ]
    assert [b["reason"] for b in out["blocks"]] == ["hybrid"]


@pytest.mark.parametrize(
    ("patch", "status", "needle"),
    [
        ({"colour": "red"}, 422, "colour"),
        ({"query": ""}, 422, "query"),
        ({"books": []}, 422, "books"),
        ({"token_budget": 32_001}, 422, "token_budget"),
        ({"strategy": "vector"}, 422, "strategy"),
        ({"placement_capabilities": ["outlet"]}, 422, "placement_capabilities"),
        ({"message_index": -1}, 422, "message_index"),
    ],
)
def test_bad_requests(api, patch, status, needle):
    book_id = create(api)["book_id"]
    before = counts()
    res = select(api, {**select_body(book_id, "q"), **patch})
    assert res.status_code == status and needle in error(res)["message"], res.content
    assert counts() == before


def test_missing_books_and_revisions_are_404(api):
    book_id = create(api)["book_id"]
    ghost = "00000000-0000-0000-0000-000000000000"
    for ref in ({"book_id": ghost}, {"book_id": "nope"}, {"book_id": book_id, "revision": 2}):
        res = select(api, {"books": [ref], "query": "q"})
        assert res.status_code == 404 and error(res)["code"] == "not_found", ref


@pytest.mark.parametrize("detail", ["matched", "selected", "none"])
def test_a_compact_answer_is_a_subset_of_the_full_one(api, detail):
    book_id = create(api, MIXED)["book_id"]
    body = select_body(
        book_id, "I walk to the gate.", template_vars={"char": "Mira", "user": "Ann"}, seed="s1"
    )
    full = select(api, body).json()
    res = select(api, {**body, "decisions": detail})
    assert res.status_code == 200, res.content
    compact = res.json()
    same = ("blocks", "context", "snapshot", "token_count", "prompt_hash", "selection_fingerprint")
    assert all(compact[key] == full[key] for key in same)
    assert all(record in full["decisions"] for record in compact["decisions"])
    ids = [d["entry_id"] for d in compact["decisions"]]
    selected = [d["entry_id"] for d in full["decisions"] if d["selected"]]
    assert "world" in selected
    expected = {
        "none": [],
        "selected": selected,
        # Selected, and every entry whose key "gate" occurred, eligible or not.
        "matched": ["world", "gate", "off", "narrator", "quest", "panel", "note", "never"],
    }[detail]
    assert ids == expected


def test_an_unknown_decision_detail_is_a_422(api):
    book_id = create(api, MIXED)["book_id"]
    res = select(api, {**select_body(book_id, "gate"), "decisions": "some"})
    assert res.status_code == 422 and error(res)["code"] == "validation_error"
