"""``bench_app``: the player app's figures (``roleplay.bench.app``): library search over
10,000 listed characters (goal p50 ≤ 30 ms) and My chats with 1,000 conversations (goal
p50 ≤ 50 ms), cold (a fresh process's first request) and warm, and the quota check's cost
per turn and exactness (``roleplay.quotas.bench``). The bench tenant is deleted afterwards."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from console.bootstrap import migrate_quietly
from roleplay.bench import app


class Command(BaseCommand):
    help = "Measure the player app's pages (server time)."

    def add_arguments(self, parser):
        parser.add_argument("--characters", type=int, default=10_000)
        parser.add_argument("--conversations", type=int, default=1_000)
        parser.add_argument("--samples", type=int, default=100)
        parser.add_argument("--figure", action="append", choices=sorted(app.FIGURES))
        parser.add_argument("--json", action="store_true")
        parser.add_argument(
            "--no-cold", action="store_true", help="warm figures only (no fresh processes)"
        )
        # One request in this process (what a figure's ``cold`` runs).
        parser.add_argument("--probe", help="the path a fresh process requests once")
        parser.add_argument("--tenant", default="")
        parser.add_argument("--user", default="")

    def handle(self, *args, characters, conversations, samples, figure, probe, **options):
        if probe:
            self.stdout.write(json.dumps(app.probe(probe, options["tenant"], options["user"])))
            return
        migrate_quietly()
        bench = app.create(characters, conversations, samples)
        bench.cold = not options["no_cold"]
        try:
            report = app.run(bench, figure)
        finally:
            app.delete(bench)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        for name, numbers in report["figures"].items():
            if "warm_ms" not in numbers:  # not a page: its own figures
                self.stdout.write(f"{name}: {json.dumps(numbers)}")
                continue
            warm = numbers["warm_ms"]
            self.stdout.write(
                f"{name}: cold {numbers['cold_ms']} ms, warm p50 {warm['p50']} ms, "
                f"p95 {warm['p95']} ms (goal p50 ≤ {numbers['goal_p50_ms']} ms)"
            )
