"""``bench_continuity`` at a small size: it plays the scripted chat over the socket with
Compact, Agent V2 and memory on, and computes every figure it prints (their values are the
benchmark's to report, not this test's to assert)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from console.models import Tenant

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_benchmark_computes_its_figures_and_cleans_up(settings):
    # One player, faster than anyone types: the chat burst limits must not refuse it.
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "chat_account": (1, 10)}
    out = StringIO()
    call_command("bench_continuity", "--turns", "20", "--baseline-turns", "5", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["turns"] == 20 and data["players"] == 2
    assert data["facts_planted"] == 12  # five a player, and each player's edited-in fact
    assert {f["present"] for f in data["facts"]} <= {True, False}
    assert all(isinstance(f["layers"], list) for f in data["facts"])
    assert len(data["retracted"]) == 2 and len(data["edited_away"]) == 2
    assert isinstance(data["leaks"], int)
    tokens = data["prompt_tokens"]
    assert tokens["budget"] == 3072 - 256 - 256
    assert tokens["first_compaction_turn"] is not None  # the small window compacts
    assert data["compactor_calls"] >= 1 and data["checkpoint_versions"] >= 1
    assert data["ttfd_ms"]["compact_off"]["p50"] is not None
    assert set(data["goal"]) == {
        "all_facts_present",
        "no_leaks",
        "no_retracted_fact_later",
        "no_edited_away_fact_later",
        "flat_tokens",
        "ttfd_within_10_percent",
    }
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


def test_bad_counts_are_refused():
    with pytest.raises(CommandError):
        call_command("bench_continuity", "--turns", "5")
    with pytest.raises(CommandError):
        call_command("bench_continuity", "--turns", "20", "--baseline-turns", "21")


def test_the_classic_layout_plays_the_same_chat():
    """``--layout classic``: the Actor's preset without the turnContext marker, which every
    Actor prompt of the run then has."""
    out = StringIO()
    call_command(
        "bench_continuity", "--turns", "20", "--baseline-turns", "2", "--layout", "classic",
        "--json", stdout=out,
    )  # fmt: skip
    data = json.loads(out.getvalue())
    assert data["layout"] == "classic" and data["prompt_layouts"] == ["classic"]
    assert data["facts_planted"] == 12
    assert not Tenant.objects.filter(name__startswith="bench-").exists()
