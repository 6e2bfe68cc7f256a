"""``bench_workflow``: what a declared workflow's planner and executor add to a turn beyond
their capabilities' own time, for a six-node graph of serial and parallel nodes
(``roleplay.workflows.engine.bench``); goal p50 ≤ 5 ms. The first call of a fresh process
is reported apart as ``cold``. No database: the engine part is pure.

DIO's figures (the active prompt's lookup on a turn) are added under ``dio`` by
``roleplay.dio.bench.figures()`` when that module exists.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

import roleplay
from roleplay.bench.stats import summary
from roleplay.workflows.engine import bench

_COLD = (
    "import json, time\n"
    "t = time.perf_counter()\n"
    "from roleplay.workflows.engine import bench\n"
    "imported = (time.perf_counter() - t) * 1000.0\n"
    "figures = bench.cold_run()\n"
    "figures['import_ms'] = imported\n"
    "print(json.dumps(figures))\n"
)


class Command(BaseCommand):
    help = "Measure the workflow planner's and executor's overhead beyond capability time."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--runs", type=int, default=1000)
        parser.add_argument("--no-cold", action="store_true", help="skip the fresh process")
        parser.add_argument("--no-dio", action="store_true", help="skip DIO's figures")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        runs = max(options["runs"], 1)
        data = workflow_figures(runs, cold=not options["no_cold"])
        if not options["no_dio"]:
            data["dio"] = dio_figures()
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2))
            return
        warm, cold = data["warm"], data["cold"]
        verdict = "met" if data["goal_met"] else "NOT met"
        lines = [
            f"workflow: {data['nodes']} nodes, {runs} runs (plan + execute)",
            f"overhead beyond capability time: p50 {warm['overhead_ms']['p50']} ms, "
            f"p95 {warm['overhead_ms']['p95']} ms (goal p50 <= {bench.GOAL_P50_MS} ms: {verdict})",
            f"total per run: p50 {warm['total_ms']['p50']} ms; planning alone p50 "
            f"{warm['plan_ms']['p50']} ms; reading the JSON p50 {data['parse_ms']['p50']} ms",
        ]
        if cold is not None:
            lines.append(
                f"cold (a fresh process's first call): overhead {cold['overhead_ms']} ms, "
                f"total {cold['total_ms']} ms (engine import {cold['import_ms']} ms)"
            )
        if "dio" in data:
            lines.append(f"dio: {json.dumps(data['dio'])}")
        self.stdout.write("\n".join(lines))


def workflow_figures(runs: int, *, cold: bool = True) -> dict[str, Any]:
    """The warm figures of this process (its own first call left out) and the cold one."""
    taken = asyncio.run(bench.samples(runs + 1))[1:]
    warm = {key: summary(s[key] for s in taken) for key in taken[0]}
    return {
        "nodes": len(bench.WORKFLOW["executionGraph"]["nodes"]),
        "runs": runs,
        "warm": warm,
        "parse_ms": summary(bench.parse_ms(min(runs, 200))),
        "cold": _cold() if cold else None,
        "goal_p50_ms": bench.GOAL_P50_MS,
        "goal_met": (warm["overhead_ms"]["p50"] or 0.0) <= bench.GOAL_P50_MS,
    }


def dio_figures() -> Any:
    """``roleplay.dio.bench.figures()`` when DIO's bench exists; None otherwise."""
    if importlib.util.find_spec("roleplay.dio.bench") is None:
        return None
    module = importlib.import_module("roleplay.dio.bench")
    return module.figures()


def _cold() -> dict[str, float]:
    root = Path(roleplay.__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", _COLD], cwd=root, capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise RuntimeError(f"the cold run failed: {done.stderr.strip()[-500:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return {key: round(value, 3) for key, value in figures.items()}
