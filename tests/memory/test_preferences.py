"""Choosing the user's stated preferences for the Actor (seed 004): every rule by example,
then the selection pinned to a deliberately simple reference implementation by properties."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.engine.preferences import (
    HEADING,
    MAX_CHARS,
    MAX_ENTRIES,
    SELECTABLE_KINDS,
    Chosen,
    Item,
    applies,
    render,
    select,
    why_not,
)

NOW = 1_000_000.0
KINDS = ("preference", "agreement", "context", "episode", "fact", "belief")
STATUSES = ("candidate", "active", "superseded", "rejected", "expired", "forgotten")
HERE = {"character_id": "c1", "session_id": "s1", "now": NOW}


def item(id: str = "m1", **fields) -> Item:
    """An active shared preference unless told otherwise."""
    base = {
        "kind": "preference",
        "scope": "shared",
        "status": "active",
        "content": f"content of {id}",
        "category_key": "",
        "pinned": False,
        "tags": (),
        "updated_at": 100.0,
        "character_id": "",
        "session_id": "",
        "share_in_session": False,
        "expires_at": None,
    }
    return Item(id=id, **{**base, **fields})


def ids(chosen: list[Chosen]) -> list[str]:
    return [entry.item.id for entry in chosen]


def session_item(id: str = "m1", **fields) -> Item:
    return item(id, **{"scope": "session", "session_id": "s1", "character_id": "c1", **fields})


def persona_item(id: str = "m1", **fields) -> Item:
    return item(id, **{"scope": "persona", "character_id": "c1", **fields})


# --- eligibility: kinds, statuses, expiry -------------------------------------------------


def test_limits_and_kinds_are_the_seeds():
    assert (MAX_ENTRIES, MAX_CHARS) == (5, 600)
    assert SELECTABLE_KINDS == ("preference", "agreement")


@pytest.mark.parametrize("kind", KINDS)
def test_only_preferences_and_agreements_are_selected(kind):
    chosen = select([item(kind=kind)], **HERE)
    assert ids(chosen) == (["m1"] if kind in SELECTABLE_KINDS else [])


@pytest.mark.parametrize("status", STATUSES)
def test_only_active_entries_are_selected(status):
    chosen = select([item(status=status)], **HERE)
    assert ids(chosen) == (["m1"] if status == "active" else [])


@pytest.mark.parametrize(
    ("expires_at", "selected"),
    [(None, True), (NOW + 0.001, True), (NOW, False), (NOW - 1, False)],
)
def test_an_entry_expiring_exactly_now_is_expired(expires_at, selected):
    assert bool(select([item(expires_at=expires_at)], **HERE)) is selected
    level = applies(item(expires_at=expires_at), **HERE)
    assert level == ("shared" if selected else None)


# --- applicability of each scope ------------------------------------------------------------


@pytest.mark.parametrize(("character_id", "session_id"), [("c1", "s1"), ("c2", "s9"), ("", "")])
def test_shared_applies_everywhere(character_id, session_id):
    here = {"character_id": character_id, "session_id": session_id, "now": NOW}
    assert applies(item(), **here) == "shared"


def test_persona_applies_to_its_own_character_only():
    assert applies(persona_item(), **HERE) == "persona"
    assert applies(persona_item(character_id="c2"), **HERE) is None
    # whatever the conversation: a persona entry follows its character
    assert applies(persona_item(), character_id="c1", session_id="s7", now=NOW) == "persona"


def test_an_entry_bound_to_nothing_applies_nowhere():
    nothing = {"character_id": "", "session_id": "", "now": NOW}
    assert applies(persona_item(character_id=""), **nothing) is None
    assert applies(persona_item(character_id=""), **HERE) is None
    assert applies(session_item(session_id="", character_id=""), **nothing) is None


def test_session_applies_in_its_own_conversation_to_its_own_character():
    assert applies(session_item(), **HERE) == "session"
    assert applies(session_item(character_id="c2"), **HERE) is None
    assert applies(session_item(character_id=""), **HERE) == "session"  # names no character


def test_a_session_entry_never_propagates_to_another_conversation():
    for shared in (False, True):
        for character in ("c1", ""):
            other = session_item(session_id="s2", character_id=character, share_in_session=shared)
            assert applies(other, **HERE) is None
            assert select([other], **HERE) == []


def test_share_in_session_lets_any_character_of_that_conversation_use_it():
    shared = session_item(character_id="c2", share_in_session=True)
    assert applies(shared, **HERE) == "session"
    assert applies(shared, character_id="c3", session_id="s1", now=NOW) == "session"


# --- precedence -----------------------------------------------------------------------------


def test_session_beats_persona_beats_shared_whatever_else():
    entries = [
        item("shared", pinned=True, tags=("a", "b"), updated_at=900.0),
        persona_item("persona", pinned=True, tags=("a",), updated_at=500.0),
        session_item("session", updated_at=1.0),
    ]
    chosen = select(entries, tags=("a", "b"), **HERE)
    assert ids(chosen) == ["session", "persona", "shared"]
    assert [entry.level for entry in chosen] == ["session", "persona", "shared"]


def test_within_a_level_pinned_then_tags_then_recent_then_id():
    entries = [
        item("z-old", updated_at=1.0),
        item("b-tie", updated_at=50.0),
        item("a-tie", updated_at=50.0),
        item("newest", updated_at=99.0),
        item("one-tag", tags=("rain",), updated_at=0.0),
        item("two-tags", tags=("rain", "night", "other"), updated_at=0.0),
        item("pinned", pinned=True, updated_at=0.0),
    ]
    chosen = select(entries, tags=["rain", "night"], max_entries=10, max_chars=10_000, **HERE)
    assert ids(chosen) == ["pinned", "two-tags", "one-tag", "newest", "a-tie", "b-tie", "z-old"]


def test_reasons_say_why_an_entry_ranked_where_it_did():
    entries = [
        session_item("s", pinned=True, tags=("x", "y", "x")),
        item("plain"),
        persona_item("p", tags=("y", "q")),
    ]
    chosen = select(entries, tags=("x", "y"), **HERE)
    assert [(entry.item.id, entry.reasons) for entry in chosen] == [
        ("s", ("session", "pinned", "tags:2")),
        ("p", ("persona", "tags:1")),
        ("plain", ("shared",)),
    ]


# --- one per category -----------------------------------------------------------------------


def test_a_more_specific_scope_overrides_a_category():
    entries = [
        item("samuel", content="call me Samuel", category_key="name", pinned=True, updated_at=9),
        session_item("sam", content="call me Sam", category_key="name", updated_at=1),
    ]
    assert ids(select(entries, **HERE)) == ["sam"]
    assert ids(select(entries, character_id="c1", session_id="s2", now=NOW)) == ["samuel"]


def test_persona_overrides_shared_and_the_newer_wins_within_a_level():
    entries = [
        item("shared", category_key="tone"),
        persona_item("persona-old", category_key="tone", updated_at=1.0),
        persona_item("persona-new", category_key="tone", updated_at=2.0),
        item("other", category_key="length"),
        item("uncategorised-1"),
        item("uncategorised-2"),
    ]
    assert ids(select(entries, **HERE)) == [
        "persona-new",
        "other",
        "uncategorised-1",
        "uncategorised-2",
    ]


def test_an_overridden_entry_does_not_return_when_its_override_is_too_long():
    entries = [
        session_item("long", content="x" * 601, category_key="name"),
        item("short", content="call me Samuel", category_key="name"),
    ]
    assert select(entries, **HERE) == []


# --- limits ---------------------------------------------------------------------------------


def test_the_character_limit_skips_an_entry_and_keeps_going():
    entries = [
        item("a", content="a" * 400, updated_at=4.0),
        item("b", content="b" * 300, updated_at=3.0),  # 700 > 600: skipped
        item("c", content="c" * 150, updated_at=2.0),
        item("d", content="d" * 50, updated_at=1.0),  # exactly 600: fits
        item("e", content="e", updated_at=0.0),
    ]
    chosen = select(entries, **HERE)
    assert ids(chosen) == ["a", "c", "d"]
    assert sum(len(entry.item.content) for entry in chosen) == MAX_CHARS


def test_the_entry_limit():
    entries = [item(f"m{i}", content="x", updated_at=float(i)) for i in range(8)]
    assert ids(select(entries, **HERE)) == ["m7", "m6", "m5", "m4", "m3"]
    assert ids(select(entries, max_entries=2, **HERE)) == ["m7", "m6"]
    assert select(entries, max_entries=0, **HERE) == []


def test_a_repeated_id_is_placed_once():
    entries = [item("m1", updated_at=1.0), item("m1", updated_at=2.0, content="newer")]
    chosen = select(entries, **HERE)
    assert [entry.item.content for entry in chosen] == ["newer"]


# --- determinism and rendering --------------------------------------------------------------


def test_the_result_does_not_depend_on_input_order():
    entries = [item(f"m{i}", content="x" * 90, updated_at=float(i % 3)) for i in range(10)]
    entries += [persona_item("p", category_key="k"), session_item("s", category_key="k")]
    expected = select(entries, tags=("t",), **HERE)
    assert select(list(reversed(entries)), tags=("t",), **HERE) == expected
    assert select(entries[5:] + entries[:5], tags=iter(["t"]), **HERE) == expected


def test_render_states_what_the_block_is():
    chosen = select(
        [session_item("a", content="call me Sam"), item("b", content="be brief")], **HERE
    )
    assert render(chosen) == f"{HEADING}\n- call me Sam\n- be brief"
    assert "stated preferences" in HEADING and "never override" in HEADING


def test_render_keeps_each_entry_on_its_line_and_nothing_renders_empty():
    chosen = select([item(content="line one\n\nline   two\n- not an entry")], **HERE)
    assert render(chosen).splitlines()[1:] == ["- line one line two - not an entry"]
    assert render([]) == ""


# --- properties against a reference -----------------------------------------------------------


def reference(items, *, character_id, session_id, tags=(), now, max_entries, max_chars):
    """Filter, sort by a key tuple, dedupe ids and categories, then greedy limits."""

    def rank(it):
        if it.kind not in ("preference", "agreement") or it.status != "active":
            return None
        if it.expires_at is not None and now >= it.expires_at:
            return None
        if it.scope == "shared":
            return 2
        if it.scope == "persona" and it.character_id != "" and it.character_id == character_id:
            return 1
        if (
            it.scope == "session"
            and it.session_id != ""
            and it.session_id == session_id
            and (it.share_in_session or it.character_id == "" or it.character_id == character_id)
        ):
            return 0
        return None

    live = [(rank(it), it) for it in items if rank(it) is not None]
    live.sort(
        key=lambda p: (
            p[0],
            not p[1].pinned,
            -len(set(p[1].tags) & set(tags)),
            -p[1].updated_at,
            p[1].id,
        )
    )
    seen_ids, seen_categories, eligible = set(), set(), []
    for level, it in live:
        if it.id in seen_ids or (it.category_key and it.category_key in seen_categories):
            seen_ids.add(it.id)
            continue
        seen_ids.add(it.id)
        if it.category_key:
            seen_categories.add(it.category_key)
        eligible.append((level, it))
    result, total = [], 0
    for level, it in eligible:
        if len(result) == max_entries:
            break
        if total + len(it.content) <= max_chars:
            total += len(it.content)
            result.append((it, ("session", "persona", "shared")[level]))
    return result


TAGS = ["rain", "night", "tea"]
CONTENTS = ["", "be brief", "call me\nSam", "x" * 40, "y" * 150, "z" * 299, "w" * 300]


@st.composite
def items(draw):
    return Item(
        id=draw(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"])),
        kind=draw(st.sampled_from(SELECTABLE_KINDS * 8 + KINDS)),
        scope=draw(st.sampled_from(["shared", "persona", "session"])),
        status=draw(st.sampled_from(("active",) * 12 + STATUSES)),
        content=draw(st.sampled_from(CONTENTS)),
        category_key=draw(st.sampled_from(["", "", "name", "tone"])),
        pinned=draw(st.booleans()),
        tags=tuple(draw(st.lists(st.sampled_from(TAGS), max_size=3))),
        updated_at=draw(st.sampled_from([0.0, 1.0, 2.0, NOW])),
        character_id=draw(st.sampled_from(["", "c1", "c2"])),
        session_id=draw(st.sampled_from(["", "s1", "s2"])),
        share_in_session=draw(st.booleans()),
        expires_at=draw(st.sampled_from([None] * 4 + [NOW - 1, NOW, NOW + 1])),
    )


# 0-30 items; plain st.lists favours very short lists, so long ones get a branch of their own
item_lists = st.lists(items(), max_size=30) | st.lists(items(), min_size=10, max_size=30)
requests = st.fixed_dictionaries(
    {
        "character_id": st.sampled_from(["", "c1", "c2"]),
        "session_id": st.sampled_from(["", "s1", "s2"]),
        "tags": st.lists(st.sampled_from(TAGS), max_size=3).map(tuple),
        "now": st.just(NOW),
        "max_entries": st.sampled_from([0, 1, 2, 3, MAX_ENTRIES, MAX_ENTRIES, 7]),
        "max_chars": st.sampled_from([MAX_CHARS, 300]) | st.integers(0, 700),
    }
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(item_lists, requests)
def test_select_matches_the_reference(entries, request):
    chosen = select(entries, **request)
    assert [(entry.item, entry.level) for entry in chosen] == reference(entries, **request)


@SETTINGS
@given(item_lists, requests)
def test_selection_invariants(entries, request):
    chosen = select(entries, **request)
    assert len(chosen) <= request["max_entries"]
    assert sum(len(entry.item.content) for entry in chosen) <= request["max_chars"]
    assert len({entry.item.id for entry in chosen}) == len(chosen)
    categories = [entry.item.category_key for entry in chosen if entry.item.category_key]
    assert len(set(categories)) == len(categories)
    here = {key: request[key] for key in ("character_id", "session_id", "now")}
    for entry in chosen:
        assert entry.item.kind in SELECTABLE_KINDS and entry.item.status == "active"
        assert entry.item.expires_at is None or entry.item.expires_at > NOW
        assert entry.level == applies(entry.item, **here) == entry.reasons[0]
        assert ("pinned" in entry.reasons) is entry.item.pinned
    levels = [("session", "persona", "shared").index(entry.level) for entry in chosen]
    assert levels == sorted(levels)


@SETTINGS
@given(st.lists(items(), max_size=30, unique_by=lambda it: it.id), requests)
def test_every_item_is_chosen_or_left_out_with_a_reason(entries, request):
    left_out: list = []
    chosen = select(entries, **request, left_out=left_out)
    assert chosen == select(entries, **request)  # explaining changes nothing
    assert sorted([e.item.id for e in chosen] + [item.id for item, _ in left_out]) == sorted(
        item.id for item in entries
    )
    here = {key: request[key] for key in ("character_id", "session_id", "now")}
    for item, reason in left_out:
        assert reason
        if applies(item, **here) is None:
            assert reason == why_not(item, **here)


@SETTINGS
@given(st.lists(items(), max_size=30, unique_by=lambda it: it.id), requests, st.randoms())
def test_input_order_never_matters(entries, request, random):
    shuffled = list(entries)
    random.shuffle(shuffled)
    assert select(shuffled, **request) == select(entries, **request)


def test_item_and_chosen_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        item().content = "changed"  # type: ignore[misc]
