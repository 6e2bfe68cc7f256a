"""``bench_turns`` end to end on a small load: the JSON shape and a clean run.

The command starts its own scripted model server and a daphne child on the test database,
so the test needs committed rows (``transaction=True``). No timing is asserted.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from console.models import Tenant
from roleplay.bench.stats import lost_deltas, percentile, reordered_deltas

SUMMARY_KEYS = {"p50", "p95", "p99", "max"}


@pytest.mark.django_db(transaction=True)
def test_bench_turns_small_run_is_clean(monkeypatch):
    # Every player of the run connects from 127.0.0.1: a per-address chat limit (here a low
    # one in the environment the daphne children inherit) must not refuse their turns.
    monkeypatch.setenv("RATE_CHAT_PER_ADDRESS_10S", "2")
    out = io.StringIO()
    call_command(
        "bench_turns",
        *("--players", "3", "--turns", "2", "--think-ms", "50", "--servers", "2", "--json"),
        stdout=out,
    )
    data = json.loads(out.getvalue())

    assert {
        "players",
        "turns_per_player",
        "turns",
        "ttfd_overhead_ms",
        "turn_ms",
        "delta_throughput_per_s",
        "errors",
        "lost_deltas",
        "reordered_deltas",
        "baseline",
        "ratio",
    } <= data.keys()
    assert (data["players"], data["turns_per_player"], data["turns"]) == (3, 2, 6)
    for figures in (data, data["baseline"]):
        assert set(figures["ttfd_overhead_ms"]) == SUMMARY_KEYS
        assert set(figures["turn_ms"]) == SUMMARY_KEYS
        assert all(v is not None for v in figures["ttfd_overhead_ms"].values())
        assert figures["errors"] == 0, figures["error_codes"]
        assert figures["lost_deltas"] == 0
        assert figures["reordered_deltas"] == 0
        assert figures["text_mismatches"] == 0
        assert figures["unmatched_server_timings"] == 0
        assert figures["deltas"] == 6 * 20  # 20 chunks per turn, every one delivered
        assert figures["delta_throughput_per_s"] > 0
    assert data["baseline"]["turns"] == 6
    assert data["ratio"] > 0
    assert data["settings"]["think_ms"] == 50 and data["settings"]["servers"] == 2
    # The same players again with no think time: the saturation figures.
    saturation = data["saturation"]
    assert saturation["turns"] == 6 and saturation["deltas"] == 6 * 20
    assert saturation["errors"] == saturation["lost_deltas"] == saturation["reordered_deltas"] == 0
    assert set(saturation["ttfd_overhead_ms"]) == SUMMARY_KEYS
    # Each turn's hooks were timed (memory as it is: nothing stored, nothing warm).
    hooks = data["hooks"]
    assert hooks["turns"] == 6 and set(hooks["memory_hooks_ms"]) == SUMMARY_KEYS
    assert {"memory_learning", "memory_context", "memory_pack"} <= set(hooks["hook_p50_ms"])
    # The throwaway tenant and everything under it is gone.
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


@pytest.mark.django_db(transaction=True)
def test_bench_turns_memory_warm_compares_memory_on_and_off():
    out = io.StringIO()
    args = ("--players", "4", "--turns", "2", "--think-ms", "50", "--memory-warm", "--json")
    call_command("bench_turns", *args, stdout=out)
    data = json.loads(out.getvalue())
    assert data["errors"] == 0 and data["lost_deltas"] == 0
    hooks = data["hooks"]
    on, off = hooks["memory_on"], hooks["memory_off"]
    assert on["turns"] == off["turns"] == 4  # two players each, two turns
    assert on["pack_reads"] == {"hit": 4}  # warm: every pre-turn pack read a hit
    assert off["pack_reads"] == {}  # memory off: no pack read at all
    assert hooks["added_p50_ms"] == round(
        on["memory_hooks_ms"]["p50"] - off["memory_hooks_ms"]["p50"], 2
    )
    assert hooks["goal"] == {"added_p50_ms": 2.0} and isinstance(hooks["meets_goal"], bool)
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


@pytest.mark.parametrize(
    "args", [["--think-ms", "-1"], ["--players", "0"], ["--turns", "101"], ["--servers", "9"]]
)
def test_bench_turns_refuses_bad_arguments(args):
    with pytest.raises(CommandError):
        call_command("bench_turns", *args)


def test_lost_and_reordered_counting():
    assert lost_deltas([0, 1, 2, 3], 4) == 0
    assert lost_deltas([0, 2, 3], 4) == 1
    assert lost_deltas([0, 0, 1], 3) == 1
    assert reordered_deltas([0, 1, 2]) == 0
    assert reordered_deltas([0, 2, 1, 3]) == 1
    assert reordered_deltas([0, 1, 1, 2]) == 1


def test_percentile_interpolates_between_ranks():
    assert percentile([], 50) is None
    assert percentile([5.0], 99) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([4.0, 1.0, 3.0, 2.0], 100) == 4.0
    assert percentile(list(range(101)), 95) == 95.0


@pytest.mark.django_db(transaction=True)
def test_capabilities_compare_says_what_they_add_and_each_hooks_share():
    out = io.StringIO()
    call_command(
        "bench_turns",
        *("--players", "2", "--turns", "2", "--think-ms", "20", "--capabilities", "compare"),
        *("--json",),
        stdout=out,
    )
    data = json.loads(out.getvalue())
    for arm in ("off", "on"):
        assert data[arm]["errors"] == 0, data[arm]["error_codes"]
        assert data[arm]["lost_deltas"] == 0 and data[arm]["turns"] == 8  # two rounds an arm
    hooks = {row["hook"]: row for row in data["comparison"]["hooks"]}
    # Off: memory off and no book, so nothing is selected; on: the book's entries are.
    assert hooks["worldbook"]["on_p50_ms"] > 0
    assert hooks["memory_pack"]["off_p50_ms"] == 0.0
    assert set(data["comparison"]["turn_p50_ms"]) == {"off", "on"}
    assert not Tenant.objects.filter(name__startswith="bench-").exists()
