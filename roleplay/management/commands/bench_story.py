"""``manage.py bench_story``: Story's two figures.

- the engine's own time per turn (no model, no database; ``story.bench.engine``), goal
  p50 ≤ 5 ms;
- with ``--live N`` also the preparation Story adds before the first delta, through the
  real turn path with every model on a scripted server answering at once
  (``roleplay.bench.story``), goal p50 ≤ 50 ms beyond model time. A throwaway ``bench-``
  tenant holds the run's rows and is deleted at the end.

Prints JSON with ``--json``.
"""

from __future__ import annotations

import json
import logging

from django.core.management.base import BaseCommand, CommandError

from story.bench import engine

QUIET_LOGGERS = ("httpx", "httpx2", "openai")


class Command(BaseCommand):
    help = (
        "Measure the Story engine's time per turn, and (--live) its preparation before the Actor."
    )

    def add_arguments(self, parser):
        parser.add_argument("--turns", type=int, default=300)
        parser.add_argument("--live", type=int, default=0, help="turns through the real turn path")
        parser.add_argument("--warmup", type=int, default=3)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, turns, live, warmup, **options):
        if not 2 <= turns <= 100_000 or not 0 <= live <= 1000 or not 0 <= warmup <= 50:
            raise CommandError("--turns 2..100000, --live 0..1000, --warmup 0..50")
        report = {"engine": engine.run(turns)}
        if live:
            report["live"] = self._live(live, warmup)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        ms = report["engine"]["engine_ms_per_turn"]
        self.stdout.write(
            f"story engine, {turns} turns: p50 {ms['p50']} ms, p95 {ms['p95']} ms per turn "
            f"(goal p50 ≤ 5 ms); {report['engine']['settled_events']} events settled, "
            f"envelope {report['engine']['envelope_bytes']} bytes"
        )
        if live:
            prep = report["live"]["prep_beyond_model_ms"]
            self.stdout.write(
                f"story preparation before the first delta, {live} live turns: p50 {prep['p50']} "
                f"ms, p95 {prep['p95']} ms beyond model time (goal p50 ≤ 50 ms)"
            )

    def _live(self, turns: int, warmup: int) -> dict:
        from console.bootstrap import migrate_quietly
        from roleplay.bench import story
        from roleplay.bench.model_process import ModelServerProcess
        from roleplay.bench.queue import private_queue
        from roleplay.bench.tenant import delete_bench_tenant

        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        migrate_quietly()
        run_id = story.run_id()
        with ModelServerProcess(story=True) as model_server:
            bench, conversation = story.create(model_server.base_url)
            try:
                with private_queue():
                    samples = [
                        story.play(conversation, n + 1, run_id) for n in range(warmup + turns)
                    ]
            finally:
                delete_bench_tenant(bench)
        return story.report(samples, warmup)
