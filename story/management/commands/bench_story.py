"""``manage.py bench_story``: the Story engine's own time per turn (no model, no database;
``story.bench.engine``). Goal: p50 ≤ 5 ms. Prints JSON with ``--json``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from story.bench import engine


class Command(BaseCommand):
    help = "Measure the Story engine's own time per turn."

    def add_arguments(self, parser):
        parser.add_argument("--turns", type=int, default=300)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, turns, **options):
        if not 2 <= turns <= 100_000:
            raise CommandError("--turns 2..100000")
        report = engine.run(turns)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        ms = report["engine_ms_per_turn"]
        self.stdout.write(
            f"story engine, {turns} turns: p50 {ms['p50']} ms, p95 {ms['p95']} ms per turn "
            f"(goal p50 ≤ 5 ms); {report['settled_events']} events settled, "
            f"envelope {report['envelope_bytes']} bytes"
        )
