"""Prepared revisions equal freshly loaded ones, over many books at once.

``engine.entry.Entry`` mirrors ``EntryIn``; a revision prepared and written out
(``engine.prepared``) selects exactly as the same revision parsed from scratch, decision for
decision, over several books at once; the compact decision answers are subsets of the full
one; and the compiled engine activates what the naive reference activates across books.
"""

from __future__ import annotations

import os
import pickle
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_wbsel_naive import _random_book, _random_text
from wbsel_helpers import book, loaded, request

from tests.worldbook.engine.wbsel_helpers import select
from worldbook.engine import prepared
from worldbook.engine.entry import MODEL_FIELDS, TUPLE_FIELDS, Entry, compact
from worldbook.engine.naive import naive_activate
from worldbook.engine.revision import revision_view
from worldbook.engine.schema import EntryIn
from worldbook.tokenizer import CL100K

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_an_entry_record_holds_the_models_values():
    model = EntryIn.model_validate(
        {
            "id": "e1",
            "content": "c",
            "keys": ["a", "b"],
            "conditions": [{"path": "q.s", "op": "eq", "value": 1}],
            "group": "b, a",
            "delay_until_recursion": 2,
            "metadata": {"x": 1},
        }
    )
    record = Entry.of(model)
    for name in MODEL_FIELDS:
        expected = getattr(model, name)
        value = getattr(record, name)
        assert value == (tuple(expected) if name in TUPLE_FIELDS else expected), name
    assert record.group_names == ("a", "b") and record.recursion_level == 2
    assert Entry.of(record) is record
    assert pickle.loads(pickle.dumps(record)).keys == ("a", "b")


def _books(rng: random.Random, count: int):
    out = []
    for n in range(count):
        entries = _random_book(rng, rng.randint(1, 20))
        for entry in entries:
            if rng.random() < 0.3:
                entry["constant"] = True
            if rng.random() < 0.2:
                entry["group"] = rng.choice(["g1", "g2"])
        out.append(loaded(book(*entries, name=f"book {n}"), book_id=f"b{n}", revision=n + 1))
    return out


def _request(rng: random.Random, books, **fields):
    history = [{"role": "user", "content": _random_text(rng)} for _ in range(rng.randint(0, 5))]
    values = {
        "history": history,
        "scan_depth": rng.randint(0, 6),
        "token_budget": rng.choice([50, 300, 2000]),
        "max_entries": rng.randint(1, 30),
        "seed": str(rng.random()),
        **fields,
    }
    return request(_random_text(rng), books=tuple(b.book_id for b in books), **values)


def _case(seed: int, fewest: int, most: int, **fields):
    """Between ``fewest`` and ``most`` random books, and a request over all of them."""
    rng = random.Random(seed)
    books = _books(rng, rng.randint(fewest, most))
    return books, _request(rng, books, **fields)


def _shared(book_):
    made = prepared.prepare(book_.book_id, book_.revision, book_.content_hash, book_.entries)
    return prepared.loads(prepared.dumps(made, CL100K))


def _comparable(result):
    body = result.response()
    body.pop("duration_ms")
    return body


@SETTINGS
@given(seed=st.integers(0, 10_000))
def test_a_prepared_revision_selects_as_a_freshly_parsed_one(seed):
    books, req = _case(seed, 1, 5)
    fresh = select(req, books)
    shared = select(req, [_shared(b) for b in books])
    assert _comparable(shared) == _comparable(fresh)


@SETTINGS
@given(seed=st.integers(0, 10_000))
def test_a_revision_prepared_inline_selects_as_a_freshly_parsed_one(seed):
    """What a turn prepares itself, and what a publish stores (no token counted until a
    selection needs it)."""
    books, req = _case(seed, 1, 5)
    fresh = select(req, books)
    inline = [prepared.prepare(b.book_id, b.revision, b.content_hash, b.entries) for b in books]
    stored = [prepared.loads(prepared.dumps(b, CL100K, counted=False)) for b in inline]
    assert _comparable(select(req, inline)) == _comparable(fresh)
    assert _comparable(select(req, stored)) == _comparable(fresh)


def test_preparing_counts_no_tokens_and_a_selection_only_the_blocks_it_weighs():
    entries = [{"id": f"e{i}", "content": f"lore {i}", "keys": [f"key{i}"]} for i in range(50)]
    source = loaded(book(*entries))
    made = prepared.prepare("b1", 1, source.content_hash, source.entries)
    view = revision_view(made.compiled, 1)
    assert CL100K.name not in view._tokens  # nothing counted yet
    result = select(request("key3 and key7"), [made])
    assert {b["entry_id"] for b in result.blocks} == {"e3", "e7"}
    counted = [i for i, n in enumerate(view._tokens[CL100K.name]) if n is not None]
    assert counted == [3, 7]
    assert prepared.loads(prepared.dumps(made, CL100K)).entries[49].content == "lore 49"
    assert None not in view._tokens[CL100K.name]  # the shared file holds them all


@SETTINGS
@given(seed=st.integers(0, 10_000))
def test_multi_book_activation_equals_the_naive_reference(seed):
    books, req = _case(seed, 2, 6, max_recursion_rounds=0, token_budget=32_000, max_entries=200)
    assert naive_activate(req, books) == set(select(req, books).activated)


@SETTINGS
@given(seed=st.integers(0, 10_000))
def test_compact_decisions_are_subsets_of_the_full_answer(seed):
    books, req = _case(seed, 1, 4)
    full = select(req, books)
    everything = full.decisions
    for detail in ("matched", "selected", "none"):
        compact = select(req.model_copy(update={"decisions": detail}), books)
        assert compact.blocks == full.blocks and compact.prompt_hash == full.prompt_hash
        assert all(record in everything for record in compact.decisions)
        if detail == "selected":
            assert compact.decisions == [d for d in everything if d["selected"]]
        if detail == "none":
            assert compact.decisions == []
        if detail == "matched":
            worth = [
                d
                for d in everything
                if d["selected"] or d["reason"] not in ("not_triggered", "disabled") or d["details"]
            ]
            assert all(d in compact.decisions for d in worth if d["reason"] != "disabled")


def test_a_foreign_or_stale_blob_is_refused():
    made = prepared.prepare("b", 1, "h", book({"id": "e", "content": "c"}).entries)

    class Evil:
        def __reduce__(self):
            return (os.system, ("true",))

    with pytest.raises(pickle.UnpicklingError):
        prepared.loads(pickle.dumps(("x", Evil())))
    stale = pickle.dumps(("wb-prepared/0", "b", 1, "h", made.compiled, made.lexical, "t", []))
    with pytest.raises(prepared.FormatMismatch):
        prepared.loads(stale)
    assert prepared.loads(prepared.dumps(made, CL100K)).entries[0].content == "c"


def test_entry_records_share_equal_traits_and_only_equal_ones():
    def model(**fields):
        return EntryIn.model_validate({"content": "c", "keys": ["k"], **fields})

    condition = {"path": "q.s", "op": "in", "value": [1, 2]}
    records = compact(
        [
            model(id="a"),
            model(id="b", priority=5, keys=["x", "y"]),  # own fields differ: traits shared
            model(id="c", delay_until_recursion=True),
            model(id="d", delay_until_recursion=1),  # equal to True in Python, not here
            model(id="e", conditions=[condition]),
            model(id="f", conditions=[dict(condition)]),
            model(id="g", conditions=[{**condition, "value": [2, 1]}]),
        ]
    )
    a, b, c, d, e, f, g = records
    assert a._traits is b._traits and b.keys == ("x", "y") and b.priority == 5
    assert c.delay_until_recursion is True and d.delay_until_recursion == 1
    assert type(d.delay_until_recursion) is int and c._traits is not d._traits
    assert c.recursion_level == d.recursion_level == 1
    assert e._traits is f._traits and f._traits is not g._traits
    assert g.conditions[0].value == [2, 1]
    again = pickle.loads(pickle.dumps(records))
    assert again[0]._traits is again[1]._traits and again[4]._traits is again[5]._traits
    for old, new in zip(records, again, strict=True):
        assert all(getattr(old, n) == getattr(new, n) for n in MODEL_FIELDS)


def test_a_key_list_holding_the_separator_stays_a_tuple():
    record = Entry.of(EntryIn.model_validate({"content": "c", "keys": ["a\x1fb", "c"]}))
    assert record.keys == ("a\x1fb", "c")
    assert Entry.of(EntryIn.model_validate({"content": "c"})).keys == ()
    assert Entry.of(EntryIn.model_validate({"content": "c", "keys": ["one"]})).keys == ("one",)


def test_a_blob_stored_before_the_index_moved_to_the_kernel_still_loads():
    from console.search.lexical import LexicalIndex
    from worldbook.engine.prepared import _ALLOWED

    assert _ALLOWED[("worldbook.engine.lexical", "LexicalIndex")] is LexicalIndex
    assert _ALLOWED[("console.search.lexical", "LexicalIndex")] is LexicalIndex
