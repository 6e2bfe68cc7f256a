"""Story's pure engine, the parts without rules of play: the seeded dice, evidence, the
quarantine rule, the size cap, the source cuts and the policy validator."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from story.engine import evidence, quarantine, size, source
from story.engine.policy import NarrativePolicy, PolicyInvalid, WorldPolicy, parse_policy
from story.engine.rng import MASK, Rng

# The dice -----------------------------------------------------------------------------


@given(st.integers(0, MASK), st.integers(1, 40))
def test_the_same_seed_draws_the_same_numbers_and_a_saved_state_resumes(seed, n):
    a, b = Rng.seeded(seed), Rng.seeded(seed)
    assert [a.next_u32() for _ in range(n)] == [b.next_u32() for _ in range(n)]
    saved = json.loads(json.dumps(a.as_json()))
    resumed = Rng.from_json(saved)
    assert [resumed.d100() for _ in range(5)] == [a.d100() for _ in range(5)]
    assert resumed.draws == a.draws == n + 5


@given(st.integers(0, MASK), st.integers(1, 1000))
def test_rolls_stay_in_range(seed, sides):
    rng = Rng.seeded(seed)
    assert 0 <= rng.below(sides) < sides
    assert 1 <= rng.d100() <= 100


def test_mulberry32_known_values_and_seed_bounds():
    # The reference mulberry32 (as written in JavaScript) gives these for seeds 731 and 0.
    rng = Rng.seeded(731)
    assert [rng.next_u32() for _ in range(3)] == [4066107536, 1065722537, 505886946]
    assert Rng.seeded(0).next_u32() == 1144304738
    with pytest.raises(ValueError):
        Rng.seeded(-1)
    with pytest.raises(ValueError):
        Rng.seeded(MASK + 1)
    with pytest.raises(ValueError):
        Rng.seeded(1).below(0)


# Evidence -----------------------------------------------------------------------------


@given(st.text(), st.text())
def test_evidence_matches_its_text_only(text, other):
    piece = evidence.capture("m1", text, "prose", 4)
    assert piece.matches(text)
    assert piece.matches(other) == (other == text)
    assert not piece.matches(None)
    assert evidence.Evidence.from_json(json.loads(json.dumps(piece.as_json()))) == piece


def test_changed_lists_edited_and_missing_messages():
    a = evidence.capture("a", "she takes the key", "prose", 2)
    u = evidence.capture("u", "I hand her the key", "user_action", 1)
    c = evidence.capture("c", "(continue)", "synthetic_continue", 3)
    stored = {"a": "she only glances at the key", "u": "I hand her the key"}
    assert evidence.changed([a, u, c], stored) == [a, c]


def test_evidence_rejects_unknown_kinds_and_negative_positions():
    with pytest.raises(ValueError):
        evidence.capture("m", "x", "summary", 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        evidence.capture("m", "x", "prose", -1)
    with pytest.raises(ValueError):
        evidence.Evidence.from_json(
            {"message_id": "m", "sha256": "0", "kind": "x", "source_position": 1}
        )


# Quarantine ---------------------------------------------------------------------------


def test_quarantine_after_three_distinct_positions_not_three_retries_of_one():
    event = quarantine.Unresolved("e1")
    for _ in range(5):
        quarantine.record_attempt(event, 10, "unknown")
    assert not quarantine.quarantine_due(event, 10)
    quarantine.record_attempt(event, 12, "unknown")
    assert not quarantine.quarantine_due(event, 12)
    quarantine.record_attempt(event, 14, "unknown")
    assert quarantine.quarantine_due(event, 14)


def test_quarantine_twelve_positions_after_the_first_attempt():
    event = quarantine.Unresolved("e1")
    quarantine.record_attempt(event, 5, "unknown")
    assert not quarantine.quarantine_due(event, 16)
    assert quarantine.quarantine_due(event, 17)
    assert not quarantine.quarantine_due(quarantine.Unresolved("e2"), 100)


@given(st.lists(st.integers(0, 200), min_size=1, max_size=10), st.integers(0, 400))
def test_quarantine_rule_is_exactly_three_positions_or_twelve_since_the_first(positions, now):
    event = quarantine.Unresolved("e")
    for p in positions:
        quarantine.record_attempt(event, p, "unknown")
    due = len(set(positions)) >= 3 or now - min(positions) >= 12
    assert quarantine.quarantine_due(event, now) == due


def test_the_quarantine_record_fits_in_64_kib_keeping_evidence_and_positions():
    event = quarantine.Unresolved(
        "e1", evidence=[evidence.capture(f"m{i}", "t", "prose", i).as_json() for i in range(20)]
    )
    for p in range(40):
        quarantine.record_attempt(event, p, "invalid", "x" * 10_000)
    record = quarantine.quarantine_record(event, 40, "three_attempts")
    raw = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
    assert len(raw) <= quarantine.RECORD_MAX_BYTES
    assert record["type"] == "story_event_quarantine"
    assert len(record["evidence"]) == 20
    assert [a["source_position"] for a in record["attempts"]] == list(range(40))
    assert record["attempts"][-1]["diagnostic"]  # the newest diagnostics are kept


# Size ---------------------------------------------------------------------------------


def test_the_cap_counts_utf8_bytes_and_raises_over_it():
    envelope = {"world": {"note": "莉娅" * 1000}}
    n = size.state_bytes(envelope)
    assert n > 2000 * 3  # three bytes a character, not one
    assert size.check_size(envelope, n) == n
    with pytest.raises(size.StateTooLarge) as caught:
        size.check_size(envelope, n - 1)
    assert caught.value.code == "story_state_too_large"
    assert envelope == {"world": {"note": "莉娅" * 1000}}  # never trimmed


# Source cuts --------------------------------------------------------------------------


def test_the_source_cuts_of_the_seed():
    history = [("user" if i % 2 else "assistant", f"m{i} " + "y" * 4000) for i in range(30)]
    history += [("system", "ignored"), ("user", "   ")]
    src = source.compile_source("Lia", "d" * 20_000, "o" * 5_000, history)
    assert len(src.definition) == 12_000
    assert len(src.opening) == 3_000
    assert len(src.recent) == 18
    assert src.recent[0][1].startswith("m12 ")
    assert all(len(text) <= 3_000 for _, text in src.recent)
    assert src.render().startswith("Character: Lia")


# Policy -------------------------------------------------------------------------------


def test_policy_defaults_are_the_seeds():
    world, narrative = parse_policy(None)
    assert (world.developMax, world.maxBackgrounds, world.maxUndercurrents) == (2, 3, 5)
    assert (world.minUndercurrents, world.maxStageRounds, world.surfaceBudget) == (2, 6, 2)
    assert (narrative.planMin, narrative.planMax, narrative.dealEveryTurns) == (5, 7, 3)
    assert (narrative.branchConsecutiveEvents, narrative.subStarveEvents) == (3, 5)
    assert narrative.mainStarveEvents == 3
    assert parse_policy({}) == (WorldPolicy(), NarrativePolicy())


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ([], "policy"),
        ({"dice": {}}, "policy.dice"),
        ({"world": {"developMax": 7}}, "policy.world.developMax"),
        ({"world": {"developMax": -1}}, "policy.world.developMax"),
        ({"world": {"surfaceBudget": True}}, "policy.world.surfaceBudget"),
        ({"world": {"maxStageRounds": 0}}, "policy.world.maxStageRounds"),
        ({"world": {"imageTool": 1}}, "policy.world.imageTool"),
        ({"narrative": {"planMin": 8, "planMax": 7}}, "policy.narrative.planMin"),
        ({"narrative": {"planMinSub": 6}}, "policy.narrative.planMinSub"),
        ({"narrative": {"dealEveryTurns": "3"}}, "policy.narrative.dealEveryTurns"),
        ({"world": {"minUndercurrents": 6}}, "policy.world.minUndercurrents"),
        ({"narrative": []}, "policy.narrative"),
    ],
)
def test_policy_rejects_bad_values_naming_the_field(data, field):
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(data)
    assert caught.value.field == field


def test_policy_bounds_plus_and_minus_one():
    assert parse_policy({"world": {"developMax": 6}})[0].developMax == 6
    assert parse_policy({"narrative": {"subStarveEvents": 50}})[1].subStarveEvents == 50
    with pytest.raises(PolicyInvalid):
        parse_policy({"narrative": {"subStarveEvents": 51}})
    with pytest.raises(PolicyInvalid):
        parse_policy({"narrative": {"branchConsecutiveEvents": 1}})
