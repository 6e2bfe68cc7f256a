"""``bench_groups``: what a group chat adds to each speaker's turn before the model call
(choosing the speaker, reading the group, the speaker's prompt), against a one-character
conversation with the same history (``roleplay.bench.groups``; goal: p50 ≤ 20 ms). The
bench tenant is deleted afterwards."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from console.bootstrap import migrate_quietly
from roleplay.bench import groups


class Command(BaseCommand):
    help = "Measure a group chat's overhead per speaker beyond the model's time."

    def add_arguments(self, parser):
        parser.add_argument("--history", type=int, default=200)
        parser.add_argument("--members", type=int, default=3)
        parser.add_argument("--samples", type=int, default=50)
        parser.add_argument("--warmup", type=int, default=5)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, history, members, samples, warmup, **options):
        migrate_quietly()
        bench = groups.create(history, max(members, 2))
        try:
            for _ in range(warmup):
                groups.sample(bench)
            results = [groups.sample(bench) for _ in range(samples)]
        finally:
            groups.delete(bench)
        report = groups.report(results, max(members, 2))
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        overhead = report["overhead_per_speaker_ms"]
        self.stdout.write(
            f"group of {report['members']}, {report['history_messages']} history messages: "
            f"overhead per speaker p50 {overhead['p50']} ms, p99 {overhead['p99']} ms "
            f"(group {report['group_turn_ms']['p50']} ms, one character "
            f"{report['single_turn_ms']['p50']} ms)"
        )
