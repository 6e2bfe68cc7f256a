"""The speed-ups must not change answers: cohort eligibility equals check_entry, the token
formula equals the tokenizer, cached per-revision values equal fresh ones, and records handed
out are never shared between results."""

from __future__ import annotations

import gc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wbsel_helpers import book, decision, loaded, request, run

from console.tokens import count_tokens
from tests.worldbook.engine.wbsel_helpers import select
from worldbook.engine.eligibility import EligibilityContext, check_entry
from worldbook.engine.matcher import compile_book
from worldbook.engine.placement import build_context, context_tokens, wrap_block
from worldbook.engine.revision import revision_view
from worldbook.engine.schema import KINDS, POSITIONS
from worldbook.engine.timed import TimedEffects
from worldbook.engine.verdicts import evaluate_book
from worldbook.tokenizer import CL100K

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text that stresses the tokenizer's pre-splitting at block edges: whitespace and newlines at
# both ends, digits, apostrophes, markup characters, CJK, emoji.
EDGY = st.text(
    alphabet=st.sampled_from(list(" \n\r\t'sdt0123456789<>&\"/_-.aZé灰港ミカ😀")),
    max_size=40,
) | st.text(max_size=40)


@SETTINGS
@given(st.lists(st.tuples(EDGY, EDGY, EDGY), max_size=6))
def test_context_tokens_equals_the_tokenizer(parts):
    blocks = [wrap_block(block_id, title, content) for block_id, title, content in parts]
    expected = count_tokens(build_context(blocks))
    assert context_tokens((count_tokens(block) for block in blocks), CL100K) == expected


CONDITIONS = [
    {"path": "quest.stage", "op": "in", "value": [1, 2]},
    {"path": "quest.stage", "op": "eq", "value": 1},
    {"path": "flag", "op": "exists"},
    {"path": "flag", "op": "ne", "value": True},
    {"path": "flag", "op": "eq", "value": 1},
]


@st.composite
def entries(draw):
    out = []
    for i in range(draw(st.integers(1, 14))):
        position = draw(st.sampled_from(POSITIONS))
        entry = {
            "id": f"e{i}",
            "content": draw(st.sampled_from(["text", "", "  ", "hi {{char}}", "{{USER}} x"])),
            "enabled": draw(st.sampled_from([True, True, True, False])),
            "audience": draw(st.sampled_from([["actor"], ["narrator"], ["narrator", "actor"]])),
            "kind": draw(st.sampled_from(KINDS[:3] * 3 + KINDS[3:])),
            "conditions": draw(st.lists(st.sampled_from(CONDITIONS), max_size=2)),
            "runtime_requirements": draw(st.sampled_from([[], [], ["ejs"]])),
            "probability": draw(st.sampled_from([100, 100, 100, 50, 0])),
            "required": draw(st.sampled_from([False, False, True])),
            "constant": draw(st.booleans()),
            "position": position,
        }
        if position == "outlet" and draw(st.booleans()):
            entry["outlet_name"] = draw(st.sampled_from(["scene", "other"]))
        timed = draw(st.sampled_from([None, "sticky", "cooldown", "delay"]))
        if timed:
            entry[timed] = 2
        out.append(entry)
    return out


@SETTINGS
@given(
    entries(),
    st.sampled_from(["actor", "narrator"]),
    st.sampled_from([{}, {"quest": {"stage": 1}}, {"quest": {"stage": 3}, "flag": True}]),
    st.sampled_from([None, ["before_character", "outlet:scene"], list(POSITIONS[:-1])]),
    st.sampled_from([{}, {"char": "Ann"}, {"char": "Ann", "user": "Bo"}]),
    st.booleans(),
)
def test_cohort_verdicts_equal_check_entry(items, audience, state, caps, tvars, conversation):
    fields = {"audience": audience, "state": state, "seed": "s", "template_vars": tvars}
    if caps is not None:
        fields["placement_capabilities"] = caps
    if conversation:
        fields.update(conversation_id="c1", message_index=3)
    req = request("q", **fields)
    source = loaded(book(*items))
    compiled = compile_book(source.book_id, source.content_hash, source.entries)
    ctx = EligibilityContext(
        audience=req.audience,
        state=req.state,
        seed=req.seed,
        capabilities=req.capabilities,
        template_vars={k.lower(): v for k, v in req.template_vars.items()},
        timed=TimedEffects({}, ["b1"], req.conversation_id, req.message_index),
    )
    verdicts = evaluate_book(ctx, compiled)
    standing, unplaceable = [], []
    for i, entry in enumerate(compiled.entries):
        expected = check_entry(ctx, "b1", compiled.ids[i], entry)
        assert verdicts.reasons[i] == expected.reason, (i, entry)
        assert verdicts.details_for(ctx, compiled, i) == expected.details, (i, entry)
        if expected.reason is None:
            assert verdicts.contents.get(i, entry.content) == expected.content
            if entry.required or entry.constant or expected.sticky:
                standing.append(i)
        elif entry.required and expected.reason == "placement_unsupported":
            unplaceable.append(i)
    assert verdicts.standing == standing
    assert verdicts.required_unplaceable == unplaceable
    assert sorted(verdicts.failed) == [i for i, r in enumerate(verdicts.reasons) if r]


@SETTINGS
@given(
    st.lists(st.tuples(EDGY.filter(str.strip), st.booleans()), min_size=1, max_size=8),
    st.integers(0, 400),
    st.sampled_from([1, 7, 123456]),
)
def test_token_count_is_the_count_of_the_context(items, budget, revision):
    entries = [
        {
            "id": f"e{i}",
            "title": content[:5],
            "content": content + (" {{char}}" if templated else ""),
            "constant": True,
        }
        for i, (content, templated) in enumerate(items)
    ]
    req = request("q", token_budget=budget, constant_budget_ratio=1.0, template_vars={"char": "A"})
    result = select(req, [loaded(book(*entries), revision=revision)])
    assert result.token_count == count_tokens(result.context) <= budget


def test_block_costs_are_cached_per_revision_number():
    source = loaded(book({"id": "a", "title": "T", "content": "some lore"}))
    compiled = compile_book(source.book_id, source.content_hash, source.entries)
    first, later = revision_view(compiled, 1), revision_view(compiled, 12345)
    assert revision_view(compiled, 1) is first
    assert first.block_id(0) == "b1:1:a" and later.block_id(0) == "b1:12345:a"
    for view in (first, later):
        wrapped = wrap_block(view.block_id(0), "T", "some lore")
        assert view.block_tokens(0, CL100K) == count_tokens(wrapped)
    assert first.block_tokens(0, CL100K) != later.block_tokens(0, CL100K)


def test_decision_records_are_never_shared_between_results():
    entries = [
        {"id": "a", "content": "x", "conditions": [{"path": "p", "op": "in", "value": [1]}]},
        {"id": "b", "content": "y", "conditions": [{"path": "p", "op": "in", "value": [1]}]},
        {"id": "c", "content": "z"},
    ]
    first = run(entries)
    a, b = decision(first, "a"), decision(first, "b")
    assert (
        a["details"]
        == b["details"]
        == {
            "index": 0,
            "condition": {"path": "p", "op": "in", "value": [1]},
        }
    )
    assert a["details"]["condition"]["value"] is not b["details"]["condition"]["value"]
    a["details"]["condition"]["value"].append(2)
    decision(first, "c")["details"]["mutated"] = True
    decision(first, "c")["reason"] = "mutated"
    second = run(entries)
    assert decision(second, "a")["details"]["condition"]["value"] == [1]
    assert decision(second, "c") == {
        "book_id": "b1",
        "revision": 1,
        "entry_id": "c",
        "title": "",
        "selected": False,
        "reason": "not_triggered",
        "details": {},
    }


def test_rendering_restores_the_garbage_collector_state():
    entries = [{"id": "a", "content": "x"}]
    assert gc.isenabled()
    assert run(entries).decisions[0]["reason"] == "not_triggered"
    assert gc.isenabled()
    gc.disable()
    try:
        assert run(entries).decisions[0]["reason"] == "not_triggered"
        assert not gc.isenabled()
    finally:
        gc.enable()


@SETTINGS
@given(
    entries(),
    st.sampled_from([None, ["before_character", "outlet:scene"], list(POSITIONS[:-1])]),
    st.sampled_from(["text", "hi", "x"]),
    st.integers(0, 5),
)
def test_excluded_is_the_rendered_decisions_worth_showing(items, caps, query, limit):
    """``SelectionResult.excluded`` (what a turn traces) renders only notable records; it
    must equal filtering the full ``decisions``."""
    required = [e for e in items if e["required"]]
    for entry in required:  # a required entry that cannot be placed is an error, not a record
        entry["required"] = False
    req = request(query, placement_capabilities=caps, template_vars={"char": "A"})
    try:
        result = select(req, [loaded(book(*items))])
    except Exception as exc:  # selection errors are another test's business
        assert getattr(exc, "code", None)
        return
    reference = [
        d
        for d in result.decisions
        if not d["selected"] and d["reason"] not in ("not_triggered", "disabled")
    ][:limit]
    assert result.excluded(limit) == reference
