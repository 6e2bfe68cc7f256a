"""Selection end to end: the seed example, every eligibility code, activation and output."""

from __future__ import annotations

import pytest
from wbsel_helpers import book, decision, loaded, reason, request, run, selected_ids

from tests.worldbook.engine.wbsel_helpers import select
from worldbook.engine.eligibility import probability_draw
from worldbook.engine.selection import SelectionError

GREYPORT = [
    {
        "id": "greyport-background",
        "title": "灰港基本设定",
        "content": "灰港是一座蒸汽城市，城内没有电力，夜晚依靠煤气灯照明。",
        "constant": True,
        "position": "before_character",
        "audience": ["actor"],
    },
    {
        "id": "copper-key",
        "title": "铜钥匙与城门守卫",
        "content": (
            "铜钥匙只能开启灰港城门的侧门。守卫在放行前必须核对来访者的手令，不能仅凭钥匙放人。"
        ),
        "keys": ["铜钥匙", "城门"],
        "position": "before_character",
        "audience": ["actor"],
        "priority": 20,
    },
]
BOOK_ID = "00000000-0000-0000-0000-000000000001"


def test_greyport_example_from_the_seed():
    result = select(
        request(
            "我把铜钥匙递给守卫。",
            books=(BOOK_ID,),
            seed="example-turn-1",
            template_vars={"char": "守卫", "user": "旅人"},
        ),
        [loaded(book(*GREYPORT, name="灰港世界设定"), book_id=BOOK_ID)],
    )
    assert {b["entry_id"]: b["reason"] for b in result.blocks} == {
        "greyport-background": "constant",
        "copper-key": "keyword",
    }
    key_block = next(b for b in result.blocks if b["entry_id"] == "copper-key")
    assert key_block == {
        "id": f"{BOOK_ID}:1:copper-key",
        "book_id": BOOK_ID,
        "revision": 1,
        "entry_id": "copper-key",
        "title": "铜钥匙与城门守卫",
        "content": GREYPORT[1]["content"],
        "position": "before_character",
        "depth": 0,
        "role": "system",
        "order": 0,
        "reason": "keyword",
    }
    assert result.context.startswith("<worldbook>\n<worldbook_entry id=")
    assert result.context.endswith("</worldbook_entry>\n</worldbook>")
    assert 0 < result.token_count <= 1500
    assert (result.tokenizer, result.token_scope, result.policy_version) == (
        "cl100k_base",
        "context",
        "wb-select/1",
    )
    assert result.snapshot["books"][0]["revision"] == 1
    assert result.degraded == [] and result.timed_state == {}
    assert len(result.decisions) == 2 and all(d["selected"] for d in result.decisions)
    assert set(result.response()) == {
        "blocks", "context", "decisions", "snapshot", "token_count", "token_budget", "tokenizer",
        "token_scope", "degraded", "policy_version", "prompt_hash", "selection_fingerprint",
        "duration_ms",
    }  # fmt: skip


def test_no_keyword_hit_is_not_triggered():
    result = run(GREYPORT, "今天天气很好")
    assert reason(result, "copper-key") == "not_triggered"
    assert selected_ids(result) == ["greyport-background"]


@pytest.mark.parametrize(
    ("entry", "fields", "code"),
    [
        ({"enabled": False, "constant": True}, {}, "disabled"),
        ({"audience": ["director"], "constant": True}, {}, "audience_mismatch"),
        ({"kind": "template", "constant": True}, {}, "kind_excluded"),
        ({"kind": "state_update", "constant": True}, {}, "kind_excluded"),
        ({"kind": "presentation", "constant": True}, {}, "kind_excluded"),
        (
            {
                "constant": True,
                "conditions": [{"path": "quest.started", "op": "eq", "value": True}],
            },
            {},
            "condition_failed",
        ),
        ({"constant": True, "runtime_requirements": ["ejs"]}, {}, "runtime_blocked"),
        ({"constant": True, "probability": 0}, {}, "probability_failed"),
        ({"constant": True, "content": "   "}, {}, "empty_content"),
        ({"constant": True, "position": "before_examples"}, {}, "placement_unsupported"),
        ({"constant": True, "content": "Hi {{user}}"}, {}, "missing_template_var"),
        ({"constant": True, "sticky": 2}, {}, "timed_effect_needs_conversation"),
        (
            {"constant": True, "delay": 3},
            {"conversation_id": "c", "message_index": 1},
            "delay_pending",
        ),
        ({"keys": ["zzz"]}, {}, "not_triggered"),
    ],
)
def test_every_eligibility_code(entry, fields, code):
    result = run([{"id": "e", "content": "text", **entry}], "hello", **fields)
    item = decision(result, "e")
    assert item["reason"] == code and item["selected"] is False
    assert result.blocks == []


def test_eligibility_order_reports_the_first_failure():
    result = run(
        [{"id": "e", "content": "", "enabled": False, "kind": "template", "audience": ["x"]}]
    )
    assert reason(result, "e") == "disabled"
    result = run([{"id": "e", "content": "", "kind": "template", "audience": ["x"]}])
    assert reason(result, "e") == "audience_mismatch"
    assert decision(result, "e")["details"] == {"audience": "actor", "allowed": ["x"]}


def test_audience_and_kinds_that_are_selectable():
    entries = [
        {"id": "lore", "content": "a", "constant": True},
        {"id": "char", "content": "b", "constant": True, "kind": "character"},
        {"id": "rule", "content": "c", "constant": True, "kind": "rule"},
        {"id": "dir", "content": "d", "constant": True, "audience": ["director", "actor"]},
    ]
    assert sorted(selected_ids(run(entries))) == ["char", "dir", "lore", "rule"]
    directed = run(entries, audience="director")
    assert selected_ids(directed) == ["dir"]


@pytest.mark.parametrize(
    ("condition", "state", "passes"),
    [
        ({"path": "quest.started", "op": "eq", "value": True}, {"quest": {"started": True}}, True),
        ({"path": "quest.started", "op": "eq", "value": True}, {"quest": {"started": 1}}, False),
        ({"path": "quest.started", "op": "eq", "value": True}, {}, False),
        ({"path": "quest.stage", "op": "ne", "value": 2}, {"quest": {"stage": 3}}, True),
        ({"path": "quest.stage", "op": "ne", "value": 2}, {"quest": {"stage": 2}}, False),
        ({"path": "quest.stage", "op": "ne", "value": 2}, {}, True),
        ({"path": "loc", "op": "in", "value": ["gate", "dock"]}, {"loc": "dock"}, True),
        ({"path": "loc", "op": "in", "value": ["gate", "dock"]}, {"loc": "inn"}, False),
        ({"path": "loc", "op": "in", "value": ["gate"]}, {}, False),
        ({"path": "party.0.name", "op": "eq", "value": "Ana"}, {"party": [{"name": "Ana"}]}, True),
        ({"path": "party.3", "op": "exists"}, {"party": [1]}, False),
        ({"path": "flag", "op": "exists"}, {"flag": None}, True),
        ({"path": "flag", "op": "exists", "value": False}, {}, True),
        ({"path": "flag", "op": "exists", "value": False}, {"flag": 0}, False),
    ],
)
def test_conditions(condition, state, passes):
    result = run(
        [{"id": "e", "content": "x", "constant": True, "conditions": [condition]}], state=state
    )
    assert (reason(result, "e") == "constant") is passes


def test_keyword_respects_the_scan_window():
    history = [{"role": "user", "content": c} for c in ["dragon here", "a", "b", "c"]]
    entries = [{"id": "d", "content": "Dragons breathe fire.", "keys": ["dragon"]}]
    # Window of 4 = the query plus the last 3 history messages: "dragon here" is the 5th back.
    assert reason(run(entries, "q", history=history), "d") == "not_triggered"
    assert reason(run(entries, "q", history=history, scan_depth=5), "d") == "keyword"
    assert reason(run(entries, "dragon", history=history, scan_depth=1), "d") == "keyword"
    assert reason(run(entries, "dragon", scan_depth=0), "d") == "not_triggered"


def test_entry_scan_depth_overrides_the_request():
    history = [{"role": "user", "content": c} for c in ["dragon", "a", "b", "c", "d", "e"]]
    entries = [
        {"id": "deep", "content": "x", "keys": ["dragon"], "scan_depth": 7},
        {"id": "shallow", "content": "y", "keys": ["dragon"]},
        {"id": "off", "content": "z", "keys": ["q"], "scan_depth": 0},
    ]
    result = run(entries, "q", history=history)
    assert reason(result, "deep") == "keyword"
    assert reason(result, "shallow") == "not_triggered"
    assert reason(result, "off") == "not_triggered"


def test_keys_do_not_match_across_messages():
    history = [{"role": "user", "content": "cop"}]
    result = run([{"id": "e", "content": "x", "keys": ["copper"]}], "per", history=history)
    assert reason(result, "e") == "not_triggered"


@pytest.mark.parametrize(
    ("logic", "query", "fires"),
    [
        ("and_any", "gate guard", True),
        ("and_any", "gate", False),
        ("and_all", "gate guard night", True),
        ("and_all", "gate guard", False),
        ("not_any", "gate", True),
        ("not_any", "gate night", False),
        ("not_all", "gate guard", True),
        ("not_all", "gate guard night", False),
    ],
)
def test_secondary_logic(logic, query, fires):
    entry = {
        "id": "e",
        "content": "x",
        "keys": ["gate"],
        "secondary_keys": ["guard", "night"],
        "selective": True,
        "logic": logic,
    }
    result = run([entry], query)
    assert (reason(result, "e") == "keyword") is fires
    if not fires:
        assert decision(result, "e")["details"]["secondary_logic"] == logic


def test_secondary_keys_ignored_unless_selective():
    entry = {"id": "e", "content": "x", "keys": ["gate"], "secondary_keys": ["guard"]}
    assert reason(run([entry], "gate"), "e") == "keyword"


def test_regex_and_whole_word_entries_in_selection():
    entries = [
        {"id": "rx", "content": "x", "keys": ["/drag(on|ons)\\b/i"]},
        {"id": "ww", "content": "y", "keys": ["cat"], "match_whole_words": True},
        {"id": "cjk", "content": "z", "keys": ["钥匙"], "match_whole_words": True},
    ]
    result = run(entries, "DRAGONS concatenate 铜钥匙")
    assert (reason(result, "rx"), reason(result, "ww"), reason(result, "cjk")) == (
        "keyword",
        "not_triggered",
        "keyword",
    )


def test_probability_is_deterministic_in_seed_and_entry():
    entries = [
        {"id": f"e{i}", "content": "x", "constant": True, "probability": 50} for i in range(40)
    ]
    first = run(entries, seed="turn-7")
    again = run(entries, seed="turn-7")
    assert selected_ids(first) == selected_ids(again)
    chosen = {d["entry_id"] for d in first.decisions if d["selected"]}
    expected = {f"e{i}" for i in range(40) if probability_draw("turn-7", "b1", f"e{i}") < 50}
    assert chosen == expected and 5 < len(chosen) < 35
    other = run(entries, seed="turn-8")
    assert {d["entry_id"] for d in other.decisions if d["selected"]} != chosen
    failed = next(d for d in first.decisions if not d["selected"])
    assert failed["reason"] == "probability_failed"
    assert failed["details"]["probability"] == 50 and failed["details"]["draw"] >= 50


def test_probability_extremes():
    always = [
        {"id": f"a{i}", "content": "x", "constant": True, "probability": 100} for i in range(20)
    ]
    never = [{"id": f"n{i}", "content": "x", "constant": True, "probability": 0} for i in range(20)]
    result = run(always + never, seed="s", token_budget=5000, constant_budget_ratio=1)
    assert sorted(selected_ids(result)) == sorted(f"a{i}" for i in range(20))


def test_template_vars_are_substituted_case_insensitively():
    entries = [{"id": "e", "content": "{{char}} greets {{USER}} & <friends>", "constant": True}]
    result = run(entries, template_vars={"char": "Guard", "user": "Traveller"})
    assert result.blocks[0]["content"] == "Guard greets Traveller & <friends>"
    assert "Guard greets Traveller &amp; &lt;friends&gt;" in result.context
    missing = run(entries, template_vars={"char": "Guard"})
    assert decision(missing, "e")["details"] == {"vars": ["user"]}


def test_placement_capabilities_and_outlets():
    entries = [
        {"id": "before", "content": "a", "constant": True},
        {"id": "examples", "content": "b", "constant": True, "position": "after_examples"},
        {
            "id": "out",
            "content": "c",
            "constant": True,
            "position": "outlet",
            "outlet_name": "scene",
        },
        {"id": "other", "content": "d", "constant": True, "position": "outlet", "outlet_name": "x"},
    ]
    default = run(entries, constant_budget_ratio=1)
    assert selected_ids(default) == ["before"]
    assert decision(default, "out")["details"] == {"position": "outlet", "needs": "outlet:scene"}
    declared = run(
        entries,
        constant_budget_ratio=1,
        placement_capabilities=["before_character", "after_examples", "outlet:scene"],
    )
    assert selected_ids(declared) == ["before", "examples", "out"]
    assert declared.blocks[-1]["outlet_name"] == "scene"
    assert "outlet_name" not in declared.blocks[0]


def test_required_entry_that_cannot_be_placed_is_an_error():
    with pytest.raises(SelectionError) as info:
        run([{"id": "r", "content": "x", "required": True, "position": "author_note_top"}])
    assert info.value.code == "required_unplaceable"
    assert info.value.details["entry_id"] == "r"


def test_blocks_are_sorted_by_position_depth_order_and_id():
    caps = ["before_character", "after_character", "at_depth"]
    entries = [
        {"id": "z-depth4", "content": "a", "keys": ["go"], "position": "at_depth", "depth": 4},
        {"id": "after", "content": "b", "keys": ["go"], "position": "after_character"},
        {"id": "depth1", "content": "c", "keys": ["go"], "position": "at_depth", "depth": 1},
        {"id": "b-late", "content": "d", "keys": ["go"], "order": 5},
        {"id": "a-early", "content": "e", "keys": ["go"], "order": -5},
        {"id": "c-mid", "content": "f", "keys": ["go"]},
        {"id": "a-mid", "content": "g", "keys": ["go"]},
    ]
    result = run(entries, "go", placement_capabilities=caps)
    assert selected_ids(result) == [
        "a-early", "a-mid", "c-mid", "b-late", "after", "depth1", "z-depth4",
    ]  # fmt: skip
    assert result.blocks[-1]["depth"] == 4


def test_hybrid_recall_uses_injected_scores_and_threshold():
    entries = [
        {"id": "keyed", "content": "a", "keys": ["zzz"]},
        {"id": "low", "content": "b", "keys": ["yyy"]},
        {"id": "keyless", "content": "c"},
        {"id": "vector", "content": "d", "vectorized": True},
    ]
    scores = {
        ("b1", "keyed"): 0.9,
        ("b1", "low"): 0.1,
        ("b1", "keyless"): 0.9,
        ("b1", "vector"): 0.5,
    }
    result = select(request(strategy="hybrid"), [loaded(book(*entries))], hybrid_scores=scores)
    assert reason(result, "keyed") == "hybrid"
    assert decision(result, "keyed")["details"] == {"score": 0.9}
    assert reason(result, "low") == "not_triggered"
    assert reason(result, "keyless") == "not_triggered"
    assert reason(result, "vector") == "hybrid"
    rules = select(request(), [loaded(book(*entries))], hybrid_scores=scores)
    assert rules.blocks == []


def test_hybrid_without_scores_degrades_to_rules():
    notes = [{"code": "vector_index_not_ready", "message": "index building"}]
    result = select(
        request("zzz", strategy="hybrid"),
        [loaded(book({"id": "k", "content": "a", "keys": ["zzz"]}))],
        degraded=notes,
    )
    assert selected_ids(result) == ["k"]
    assert [d["code"] for d in result.degraded] == [
        "vector_index_not_ready",
        "hybrid_scores_unavailable",
    ]


def test_hybrid_hit_ranks_after_keyword_hits():
    entries = [
        {"id": "by-score", "content": "word " * 30, "keys": ["zzz"]},
        {"id": "by-key", "content": "word " * 30, "keys": ["go"]},
    ]
    result = select(
        request("go", strategy="hybrid", token_budget=80),
        [loaded(book(*entries))],
        hybrid_scores={("b1", "by-score"): 0.99},
    )
    assert selected_ids(result) == ["by-key"]
    assert reason(result, "by-score") == "budget_dropped"


def test_multiple_books_and_mismatches():
    one = loaded(book({"id": "e", "content": "one", "constant": True}), book_id="b1")
    two = loaded(book({"id": "e", "content": "two", "constant": True}), book_id="b2", revision=3)
    result = select(request(books=("b2", "b1")), [one, two])
    assert [(d["book_id"], d["revision"]) for d in result.decisions] == [("b2", 3), ("b1", 1)]
    assert [b["id"] for b in result.blocks] == ["b1:1:e", "b2:3:e"]
    with pytest.raises(SelectionError) as info:
        select(request(books=("b1",)), [one, two])
    assert info.value.code == "book_mismatch"
    with pytest.raises(SelectionError):
        select(request(books=("b1", "b3")), [one])
    pinned = request(books=("b2",)).model_copy(
        update={"books": [request(books=("b2",)).books[0].model_copy(update={"revision": 2})]}
    )
    with pytest.raises(SelectionError):
        select(pinned, [two])


def test_context_escapes_content_and_attributes():
    entries = [
        {"id": "e", "title": 'a "b" <c>', "content": "</worldbook_entry><x>", "constant": True}
    ]
    context = run(entries).context
    assert 'title="a &quot;b&quot; &lt;c&gt;"' in context
    assert "&lt;/worldbook_entry&gt;&lt;x&gt;" in context
    assert context.count("</worldbook_entry>") == 1


def test_empty_selection_has_empty_context():
    result = run([{"id": "e", "content": "x", "keys": ["nope"]}])
    assert result.context == "" and result.token_count == 0 and result.blocks == []


def test_fingerprints():
    entries = [{"id": "e", "content": "x", "constant": True}]
    a, b = run(entries, seed="1"), run(entries, seed="2")
    assert a.selection_fingerprint == b.selection_fingerprint
    assert a.prompt_hash != b.prompt_hash
    assert run(entries, seed="1").prompt_hash == a.prompt_hash
