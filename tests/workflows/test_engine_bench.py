"""``bench_workflow`` runs without a database and answers its figures' shape (no figure is
asserted: the machine's speed is not the code's). Pure apart from the command's module."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from io import StringIO

import pytest
from django.core.management import call_command

from roleplay.management.commands.bench_workflow import dio_figures
from roleplay.workflows.engine import bench


def test_the_bench_graph_is_six_nodes_that_plan_and_run():
    spec = bench.parse_workflow(bench.WORKFLOW)
    assert len(spec.nodes) == 6
    assert {n.parallel for n in spec.nodes} == {True, False}  # serial and parallel mixed
    figures = asyncio.run(bench.sample(spec))
    assert set(figures) == {"total_ms", "plan_ms", "capability_ms", "overhead_ms"}
    assert figures["total_ms"] >= figures["overhead_ms"] >= 0


def test_capability_time_counts_overlapping_calls_once():
    assert bench._union([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0), (5.5, 5.7)]) == 4.0
    assert bench._union([]) == 0.0


def test_the_command_answers_json_with_warm_and_cold_figures():
    out = StringIO()
    call_command("bench_workflow", "--runs", "3", "--json", "--no-dio", stdout=out)
    data = json.loads(out.getvalue())
    assert data["nodes"] == 6 and data["runs"] == 3
    assert set(data["warm"]["overhead_ms"]) >= {"p50", "p95"}
    assert set(data["cold"]) >= {"overhead_ms", "total_ms", "import_ms"}
    assert data["goal_p50_ms"] == 5.0 and isinstance(data["goal_met"], bool)
    assert "dio" not in data


def test_dio_figures_are_none_until_dio_has_a_bench_module():
    if importlib.util.find_spec("roleplay.dio.bench") is not None:
        pytest.skip("DIO's bench exists: its figures are its own tests' concern")
    assert dio_figures() is None


def test_the_command_prints_the_goal_beside_the_figure():
    out = StringIO()
    call_command("bench_workflow", "--runs", "2", "--no-cold", "--no-dio", stdout=out)
    assert "goal p50 <= 5.0 ms" in out.getvalue()
