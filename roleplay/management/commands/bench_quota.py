"""``bench_quota``: the quota check's cost per turn (p50/p95 µs, goal ≤ 1 ms p50) and, under
concurrent players, lost or double-counted increments (goal 0) (``roleplay.quotas.bench``).
The bench tenant is deleted afterwards."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from console.bootstrap import migrate_quietly
from roleplay.quotas.bench import quota_figures


class Command(BaseCommand):
    help = "Measure the quota check's cost per turn and its exactness under concurrency."

    def add_arguments(self, parser):
        parser.add_argument("--players", type=int, default=50)
        parser.add_argument("--turns", type=int, default=20)
        parser.add_argument("--samples", type=int, default=2000)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, players, turns, samples, **options):
        migrate_quietly()
        report = quota_figures(players, turns=turns, samples=samples)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        shared = report["shared_player"]
        self.stdout.write(
            f"quota check p50 {report['check_us']['p50']} µs, p95 {report['check_us']['p95']} µs "
            f"(SELECT 1: {report['baseline_select_1_us']['p50']} µs); {players} players x "
            f"{turns} turns: lost {report['lost']}, double-counted {report['double_counted']}; "
            f"one player raced by {shared['tries']} at a limit of {shared['limit']}: "
            f"{shared['admitted']} through"
        )
