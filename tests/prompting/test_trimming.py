"""The history's trimming rule with slack (``roleplay.prompting.trimming``), pure."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from roleplay.prompting import trimming

costs = st.lists(st.integers(min_value=1, max_value=500), max_size=60)


@given(costs, st.integers(min_value=1, max_value=20_000), st.booleans())
def test_a_cut_covers_the_excess_and_with_slack_a_quarter_more(values, excess, slack):
    dropped = trimming.cut(values, excess, slack=slack)
    wanted = excess + (int(trimming.SLACK * sum(values)) if slack else 0)
    assert sum(values[:dropped]) >= wanted or dropped == len(values)
    assert dropped == 0 or sum(values[: dropped - 1]) < wanted  # never one more than needed


def _history(n: int, tag: str = "m") -> list[dict]:
    return [{"role": ("user", "assistant")[i % 2], "content": f"{tag}{i}"} for i in range(n)]


@given(st.integers(1, 80), st.data(), st.integers(0, 10))
def test_the_next_turn_finds_where_this_one_started(n, data, more):
    history = _history(n)
    start = data.draw(st.integers(0, n - 1))
    mark = trimming.mark(history, start)
    later = history + _history(more, "new")
    assert trimming.start_of(later, {trimming.KEY: mark}) == start


def test_a_start_that_left_the_history_or_a_broken_mark_starts_at_zero():
    history = _history(6)
    gone = trimming.mark(_history(3, "old"), 0)
    assert trimming.start_of(history, {trimming.KEY: gone}) == 0
    for broken in (None, {}, {trimming.KEY: "x"}, {trimming.KEY: [1, 2, 3]},
                   {trimming.KEY: ["abc", "", True]}, {trimming.KEY: ["a", 1, 2]},
                   {trimming.KEY: ["a", "b"]}):  # fmt: skip
        assert trimming.start_of(history, broken) == 0
    assert trimming.mark(history, 6) is None


def test_repeated_messages_resolve_to_the_one_where_the_start_was():
    history = [{"role": "user", "content": "ok"}] * 10
    mark = trimming.mark(history, 6)
    later = history + [{"role": "assistant", "content": "x"}] * 2
    assert trimming.start_of(later, {trimming.KEY: mark}) == 6
    # a full read moved by two: the same message, two places earlier
    shifted = _history(20)
    mark = trimming.mark(shifted, 8)
    assert trimming.start_of(shifted[2:] + _history(2, "n"), {trimming.KEY: mark}) == 6


@given(st.lists(st.sampled_from(["a", "b"]), min_size=2, max_size=30), st.data())
def test_a_history_of_repeats_still_finds_its_start_when_it_only_grew(words, data):
    history = [{"role": "user", "content": w} for w in words]
    start = data.draw(st.integers(0, len(history) - 1))
    mark = trimming.mark(history, start)
    grown = history + [{"role": "assistant", "content": w} for w in words[:3]]
    assert trimming.start_of(grown, {trimming.KEY: mark}) == start


def test_a_full_read_keeps_a_new_start_well_inside_it():
    assert trimming.read_cap(150, 200) == 0 and trimming.read_cap(200, 0) == 0
    assert trimming.read_cap(200, 200) == 40 and trimming.read_cap(190, 200) == 0


def _nearest_by_scan(history, first, after, index):
    """The rule as a scan of the whole read: every match, the nearest to ``index`` (then the
    older) wins."""
    digest = trimming._digest
    found = [
        i
        for i, m in enumerate(history)
        if digest(m) == first
        and (not after or (i + 1 < len(history) and digest(history[i + 1]) == after))
    ]
    return min(found, key=lambda i: (abs(i - index), i)) if found else 0


@given(
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=40),
    st.sampled_from(["a", "b", "c", "z"]),
    st.sampled_from(["", "a", "b", "c"]),
    st.one_of(st.integers(-50, 90), st.integers(-(10**18), 10**18)),
)
def test_the_search_outward_from_the_old_index_finds_what_a_whole_scan_finds(
    words, first, after, index
):
    history = [{"role": "user", "content": w} for w in words]
    digest = trimming._digest
    mark = [digest({"role": "user", "content": first}), after and digest(
        {"role": "user", "content": after}), index]  # fmt: skip
    assert trimming.start_of(history, {trimming.KEY: mark}) == _nearest_by_scan(
        history, mark[0], mark[1], index
    )
