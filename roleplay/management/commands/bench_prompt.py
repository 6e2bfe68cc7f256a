"""``bench_prompt``: the time to read a turn's context and assemble its Actor prompt.

A conversation with 200 stored messages, a character bound to a 5,000-entry worldbook and a
20-prompt preset (``roleplay.bench.prompt``); prints the p50/p95/p99 of the whole and of each
stage (read, worldbook, memory, assembly) and each stage's share of the median. ``memory``
is what the memory hooks, the pre-turn pack read included, add to the turn's critical path
(goal: 2 ms p50). The bench tenant is
deleted afterwards.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from console.bootstrap import migrate_quietly
from roleplay.bench import prompt


class Command(BaseCommand):
    help = "Measure reading a turn's context and assembling its Actor prompt."

    def add_arguments(self, parser):
        parser.add_argument("--history", type=int, default=200)
        parser.add_argument("--entries", type=int, default=5000)
        parser.add_argument("--prompts", type=int, default=20)
        parser.add_argument("--samples", type=int, default=50)
        parser.add_argument("--warmup", type=int, default=5)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, history, entries, prompts, samples, warmup, **options):
        migrate_quietly()
        bench = prompt.create(history, entries, prompts)
        try:
            for _ in range(warmup):  # compiled revision, tokenizer, preset loaded once
                prompt.sample(bench)
            results = [prompt.sample(bench) for _ in range(samples)]
        finally:
            prompt.delete(bench)
        report = prompt.report(results)
        if options["json"]:
            self.stdout.write(_dumps(report))
            return
        total = report["total_ms"]
        self.stdout.write(
            f"prompt for {report['history_messages']} history messages, "
            f"{report['preset_prompts']} preset prompts, {report['worldbook_blocks']} blocks: "
            f"p50 {total['p50']} ms, p99 {total['p99']} ms"
        )
        for stage, share in report["stage_share_of_p50"].items():
            self.stdout.write(
                f"  {stage}: p50 {report['stages_ms'][stage]['p50']} ms ({share:.0%})"
            )
        self.stdout.write(f"  pre-turn pack reads: {report['pack_reads']}")


def _dumps(value) -> str:
    return json.dumps(value, indent=2)
