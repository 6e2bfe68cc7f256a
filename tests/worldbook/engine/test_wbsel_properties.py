"""Properties over random books and requests (hypothesis)."""

from __future__ import annotations

from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wbsel_helpers import book, loaded, request

from tests.worldbook.engine.wbsel_helpers import select
from worldbook.engine.revision import RevisionView
from worldbook.engine.schema import POSITIONS
from worldbook.engine.selection import SelectionError

WORDS = ["gate", "key", "guard", "night", "铜钥匙", "城门", "rain", "fog"]


@st.composite
def scenarios(draw):
    size = draw(st.integers(min_value=1, max_value=12))
    entries = []
    for i in range(size):
        entry = {
            "id": f"e{i}",
            "content": " ".join(draw(st.lists(st.sampled_from(WORDS + ["<&>"]), max_size=40))),
            "keys": draw(st.lists(st.sampled_from(WORDS), max_size=3)),
            "constant": draw(st.booleans()),
            "required": draw(st.sampled_from([False] * 6 + [True])),
            "priority": draw(st.integers(-3, 3)),
            "order": draw(st.integers(-3, 3)),
            "probability": draw(st.sampled_from([100, 100, 50, 0])),
            "position": draw(st.sampled_from(POSITIONS[:3] + ("before_examples",))),
            "prevent_recursion": draw(st.booleans()),
            "exclude_recursion": draw(st.booleans()),
            "group": draw(st.sampled_from(["", "", "g1", "g2"])),
            "conflict_key": draw(st.sampled_from([None, None, "c1"])),
        }
        if i and draw(st.booleans()):
            entry["requires"] = [f"e{draw(st.integers(0, i - 1))}"]
        entries.append(entry)
    fields = {
        "token_budget": draw(st.integers(0, 600)),
        "constant_budget_ratio": draw(st.sampled_from([0.0, 0.35, 1.0])),
        "max_entries": draw(st.integers(1, 8)),
        "scan_depth": draw(st.integers(0, 4)),
        "seed": draw(st.text(max_size=5)),
        "use_group_scoring": draw(st.booleans()),
    }
    history = [
        {"role": "user", "content": " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=5)))}
        for _ in range(draw(st.integers(0, 3)))
    ]
    query = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)))
    return entries, query, history, fields


def _select(entries, query, history, fields):
    return select(request(query, history=history, **fields), [loaded(book(*entries))])


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(scenarios())
def test_selection_properties(scenario):
    entries, query, history, fields = scenario
    try:
        result = _select(entries, query, history, fields)
    except SelectionError as exc:
        # Only required entries may make a selection fail.
        assert any(e["required"] for e in entries), exc.code
        return
    # token_count never exceeds the budget and is the count of the returned context
    assert result.token_count <= fields["token_budget"]
    assert len(result.blocks) <= fields["max_entries"]
    # a decision for every entry, in order, consistent with the blocks
    assert [d["entry_id"] for d in result.decisions] == [e["id"] for e in entries]
    chosen = {d["entry_id"] for d in result.decisions if d["selected"]}
    assert chosen == {b["entry_id"] for b in result.blocks}
    # every required entry that passed eligibility is included (else we would have raised)
    for entry, item in zip(entries, result.decisions, strict=True):
        if entry["required"] and item["reason"] in ("required",):
            assert item["selected"]
        if entry["required"] and not item["selected"]:
            assert item["reason"] in {
                "probability_failed", "empty_content", "group_lost",
            }, item  # fmt: skip
    # selected dependency closure is complete
    by_id = {e["id"]: e for e in entries}
    for entry_id in chosen:
        for dep in by_id[entry_id].get("requires", []):
            assert dep in chosen


@SETTINGS
@given(scenarios())
def test_same_request_same_result(scenario):
    entries, query, history, fields = scenario
    outcomes = []
    for _ in range(2):
        try:
            data = _select(entries, query, history, fields).response()
            data.pop("duration_ms")
            outcomes.append(data)
        except SelectionError as exc:
            outcomes.append(exc.to_dict())
    assert outcomes[0] == outcomes[1]


@SETTINGS
@given(scenarios(), scenarios())
def test_plain_constants_fare_as_any_group(first, second):
    """The budget takes plain constants from each revision's ready-ranked list; with those
    lists empty every active entry goes the general way (closure, conflicts, sort), and the
    two must agree on everything, over two books."""
    entries, query, history, fields = first
    other = []
    for n, entry in enumerate(second[0]):
        entry = {**entry, "id": f"x{entry['id']}"}
        entry["requires"] = [f"x{dep}" for dep in entry.get("requires", [])]
        if n % 3:  # most of this book: plain constants
            plain = {"constant": True, "required": False, "group": "", "conflict_key": None}
            entry.update(plain, requires=[])
        other.append(entry)
    books = [loaded(book(*entries), "b1"), loaded(book(*other), "b2")]
    req = request(query, books=("b1", "b2"), history=history, **fields)

    def outcome():
        try:
            result = select(req, books)
        except SelectionError as exc:
            return exc.to_dict()
        data = result.response()
        data.pop("duration_ms")
        return data, result.decisions, sorted(result.activated)

    planned = outcome()
    with mock.patch.object(RevisionView, "plain_constants", lambda view: []):
        general = outcome()
    assert planned == general
