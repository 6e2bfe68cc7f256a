"""``bench_dio``: what DIO costs a turn (``roleplay.dio.bench``): the queries DIO off adds
(goal 0) and the time the DIO phase adds when an active prompt exists (goal p50 ≤ 1 ms)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from console.bootstrap import migrate_quietly
from roleplay.dio import bench


class Command(BaseCommand):
    help = "Measure what reading and applying DIO's active prompt adds to a turn."

    def add_arguments(self, parser):
        parser.add_argument("--samples", type=int, default=200)
        parser.add_argument("--warmup", type=int, default=20)
        parser.add_argument("--backend", choices=["in_process", "internal"], default="internal")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, samples, warmup, backend, **options):
        migrate_quietly()
        seed = bench.store if backend == "internal" else None
        report = bench.measure(samples=samples, warmup=warmup, backend=backend, seed=seed)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        on, off = report["on"], report["off"]
        self.stdout.write(
            f"DIO ({report['backend']}): on adds p50 {on['added_ms']['p50']} ms "
            f"(p95 {on['added_ms']['p95']} ms, prompt found: {on['found']}); "
            f"off adds {off['extra_queries']} queries"
        )
