"""``manage.py bench_agent``: what Agent V2's background run costs beyond its model calls.

N turns on one conversation whose scenario has Agent V2 on, every model (the Actor's and
the orchestrator's, specialists' and Director's, each with a model name of its own) on the
scripted model server in a process of its own, answering the happy path: phase 1 picks
``manage_callbacks``, phase 2 ``update_director_state``, the Director writes a new valid
state each turn, so each turn commits a new revision. Each turn goes through the real turn
path, then its planning run is executed in this process (``planning.execute``, the Celery
task's body; no worker needed) before the next turn (``roleplay.bench.agent``).

Prints the runs' own timings: ``overhead_ms`` (task time minus model time) p50/p95/max
against the goal (p50 <= 100 ms), ``model_ms`` and ``task_ms``, the stages, the outcomes
(all ``updated`` on a clean run) and the revisions committed. A throwaway ``bench-*``
tenant holds the run's data and is deleted at the end; the tasks the turns enqueued go to a
private Celery queue, purged at the end. All traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import json
import logging

from django.core.management.base import BaseCommand, CommandError

from console.bootstrap import migrate_quietly
from roleplay.bench import agent
from roleplay.bench.model_process import ModelServerProcess
from roleplay.bench.queue import private_queue

MAX_TURNS = 1000
MAX_WARMUP = 50
QUIET_LOGGERS = ("httpx", "httpx2", "openai")


class Command(BaseCommand):
    help = "Benchmark Agent V2's background runs, executed in-process (see the module docstring)."

    def add_arguments(self, parser):
        parser.add_argument("--turns", type=int, default=30, help="measured turns")
        parser.add_argument(
            "--warmup", type=int, default=2, help="unmeasured turns on another conversation"
        )
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")

    def handle(self, *args, turns, warmup, **opts):
        if not 1 <= turns <= MAX_TURNS or not 0 <= warmup <= MAX_WARMUP:
            raise CommandError(f"--turns 1..{MAX_TURNS}, --warmup 0..{MAX_WARMUP}")
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        migrate_quietly()
        with ModelServerProcess(agentic=True) as model_server:
            bench = agent.create(model_server.base_url, warmup=warmup > 0)
            try:
                with private_queue() as queue:
                    for index in range(warmup):
                        agent.play(bench, bench.agentic.warmup[0], index + 1, label="w")
                    samples = [
                        agent.play(bench, bench.conversation, index + 1) for index in range(turns)
                    ]
                committed = agent.revisions(bench)
            finally:
                agent.delete(bench)
        data = agent.report(
            samples, warmup_turns=warmup, committed=committed, purged=queue["purged"]
        )
        self.stdout.write(json.dumps(data, indent=2) if opts["json"] else agent.render(data))
