"""``bench_front_loop``: the front tool loop's own cost per step and its delay to the first
word, against direct generation with the same scripted latencies (``roleplay.bench.front_loop``).
The first turn of each kind is reported as ``cold`` (a fresh process, the first turn after the
scenario was published); the others as ``warm``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from console.bootstrap import migrate_quietly
from roleplay.bench.front_loop import Latencies, run_bench


class Command(BaseCommand):
    help = "Measure the front tool loop's overhead per step and its time to first delta."

    def add_arguments(self, parser):
        parser.add_argument("--turns", type=int, default=30)
        parser.add_argument("--segments", type=int, default=2)
        parser.add_argument("--controller-ms", type=float, default=80.0)
        parser.add_argument("--actor-first-ms", type=float, default=60.0)
        parser.add_argument("--chunks", type=int, default=20)
        parser.add_argument("--chunk-ms", type=float, default=5.0)
        parser.add_argument("--direct-first", action="store_true")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        migrate_quietly()
        lat = Latencies(
            controller_ms=options["controller_ms"],
            actor_first_ms=options["actor_first_ms"],
            chunks=options["chunks"],
            chunk_ms=options["chunk_ms"],
            segments=options["segments"],
        )
        data = run_bench(max(options["turns"], 2), lat, loop_first=not options["direct_first"])
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2))
            return
        warm, cold = data["warm"], data["cold"]
        self.stdout.write(
            f"front loop: {data['turns']['loop']} turns, {data['steps_per_turn']} steps each, "
            f"errors {data['errors']}\n"
            f"overhead per step beyond model time: warm p50 {warm['overhead_per_step_ms']['p50']} "
            "ms (goal <= 15)\n"
            "time to first delta beyond the controller's call, against direct: warm p50 "
            f"{warm['ttfd_extra_beyond_controller_ms']['p50']} ms (goal <= 20); after a publish "
            f"{data['after_publish']['ttfd_extra_beyond_controller_ms']} ms\n"
            f"cold (fresh process, first turn {cold['process_first_turn']}): own delay to the "
            f"first delta, loop {cold['loop']['own_delay_to_first_delta_ms']} ms, direct "
            f"{cold['direct']['own_delay_to_first_delta_ms']} ms"
        )
