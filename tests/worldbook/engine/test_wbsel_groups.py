"""Inclusion groups: override, weighted deterministic draw, scoring, multi-group entries."""

from __future__ import annotations

from collections import Counter

from wbsel_helpers import decision, reason, run, selected_ids

from worldbook.engine.groups import weighted_draw


def _weather(**extra):
    return [
        {"id": "rain", "content": "It rains.", "keys": ["weather"], "group": "weather", **extra},
        {"id": "fog", "content": "Fog rolls.", "keys": ["weather"], "group": "weather", **extra},
        {"id": "sun", "content": "Sun shines.", "keys": ["weather"], "group": "weather", **extra},
    ]


def test_one_member_of_a_group_survives():
    result = run(_weather(), "weather")
    assert len(result.blocks) == 1
    winner = result.blocks[0]["entry_id"]
    losers = [d for d in result.decisions if d["entry_id"] != winner]
    assert all(d["reason"] == "group_lost" for d in losers)
    assert losers[0]["details"] == {"group": "weather", "winner": f"b1:{winner}"}


def test_draw_is_deterministic_per_seed_and_varies_across_seeds():
    winners = {selected_ids(run(_weather(), "weather", seed=f"s{i}"))[0] for i in range(30)}
    assert winners == {"rain", "fog", "sun"}
    assert selected_ids(run(_weather(), "weather", seed="x")) == selected_ids(
        run(_weather(), "weather", seed="x")
    )


def test_group_weight_biases_the_draw():
    entries = _weather()
    entries[0]["group_weight"] = 1000
    entries[1]["group_weight"] = 1
    entries[2]["group_weight"] = 1
    wins = Counter(selected_ids(run(entries, "weather", seed=str(i)))[0] for i in range(60))
    assert wins["rain"] >= 50


def test_weighted_draw_bounds():
    assert weighted_draw("s", "g", [1]) == 0
    counts = Counter(weighted_draw(str(i), "g", [1, 3]) for i in range(400))
    assert 50 < counts[0] < 150 and counts[0] + counts[1] == 400


def test_override_picks_highest_order():
    entries = _weather()
    entries[1].update(group_override=True, order=1)
    entries[2].update(group_override=True, order=7)
    for seed in ("a", "b", "c"):
        assert selected_ids(run(entries, "weather", seed=seed)) == ["sun"]


def test_group_scoring_keeps_best_matches():
    entries = [
        {"id": "one", "content": "a", "keys": ["storm"], "group": "g"},
        {"id": "two", "content": "b", "keys": ["storm", "thunder"], "group": "g"},
        {"id": "three", "content": "c", "keys": ["storm", "thunder", "lightning"], "group": "g"},
    ]
    for seed in ("1", "2", "3", "4"):
        result = run(entries, "storm thunder lightning", seed=seed, use_group_scoring=True)
        assert selected_ids(result) == ["three"]
    partial = run(entries, "storm thunder", use_group_scoring=True, seed="1")
    assert selected_ids(partial) in (["two"], ["three"])
    assert reason(partial, "one") == "group_lost"


def test_per_entry_scoring_flag_overrides_request_default():
    entries = [
        {"id": "weak", "content": "a", "keys": ["storm"], "group": "g", "use_group_scoring": True},
        {"id": "strong", "content": "b", "keys": ["storm", "rain"], "group": "g"},
    ]
    for seed in ("1", "2", "3", "4", "5"):
        assert selected_ids(run(entries, "storm rain", seed=seed)) == ["strong"]


def test_required_and_constant_entries_take_part():
    entries = [
        {"id": "req", "content": "a", "required": True, "group": "g", "group_override": True},
        {"id": "const", "content": "b", "constant": True, "group": "g"},
    ]
    result = run(entries)
    assert selected_ids(result) == ["req"] and reason(result, "const") == "group_lost"


def test_entry_in_several_groups():
    entries = [
        {"id": "both", "content": "a", "keys": ["go"], "group": "x, y", "group_override": True},
        {"id": "x-only", "content": "b", "keys": ["go"], "group": "x"},
        {"id": "y-only", "content": "c", "keys": ["go"], "group": "y"},
        {"id": "free", "content": "d", "keys": ["go"]},
    ]
    result = run(entries, "go")
    assert sorted(selected_ids(result)) == ["both", "free"]
    assert decision(result, "y-only")["details"]["group"] == "y"


def test_inactive_members_do_not_compete():
    entries = _weather()
    entries[0]["keys"] = ["rain"]
    entries[1]["keys"] = ["nothing"]
    entries[2]["keys"] = ["nothing"]
    result = run(entries, "rain")
    assert selected_ids(result) == ["rain"]
    assert reason(result, "fog") == "not_triggered"
