"""``bench_story``: the engine's turns run to the end with a settled event every few turns
and an envelope under the cap; the command prints the figures as JSON."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from story.bench import engine


def test_the_engine_bench_drives_every_step():
    report = engine.run(24)
    assert report["turns"] == 24 and report["world_round"] == 24
    assert report["settled_events"] >= 5
    assert 0 < report["envelope_bytes"] <= 60_000
    assert report["stage_block_chars"] > 100
    assert set(report["engine_ms_per_turn"]) == {"p50", "p95", "max"}


def test_the_command_prints_json_and_refuses_bad_counts():
    out = StringIO()
    call_command("bench_story", "--turns", "10", "--json", stdout=out)
    data = json.loads(out.getvalue())["engine"]
    assert data["turns"] == 10 and data["goal_engine_p50_ms"] == 5.0
    with pytest.raises(CommandError):
        call_command("bench_story", "--turns", "1")
    with pytest.raises(CommandError):
        call_command("bench_story", "--live", "-1")


@pytest.mark.django_db(transaction=True)
def test_the_live_bench_runs_real_story_turns_and_cleans_up():
    from console.models import Tenant

    out = StringIO()
    call_command(
        "bench_story", "--turns", "10", "--live", "4", "--warmup", "1", "--json", stdout=out
    )
    live = json.loads(out.getvalue())["live"]
    assert live["turns"] == 4 and live["complete_turns"] == 4
    assert live["routes"] == ["accept_then_prepare"]
    assert live["model_calls"]["story_advance"] == 4
    assert live["prep_beyond_model_ms"]["p50"] is not None
    assert not Tenant.objects.filter(name__startswith="bench-").exists()
