"""``bench_branches --messages 10000 --json``: branch creation at the end of a long history
against a short one, and the turn's history read with and without branches
(``roleplay.branches.bench``)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from console.bootstrap import migrate_quietly
from roleplay.branches import bench


class Command(BaseCommand):
    help = "Measure branch creation and the history read of a branch."

    def add_arguments(self, parser):
        parser.add_argument("--messages", type=int, default=10_000)
        parser.add_argument("--repeat", type=int, default=20)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, messages, repeat, **options):
        migrate_quietly()
        report = bench.measure(max(messages, 10), max(repeat, 1))
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self.stdout.write(
            f"branch at {report['messages']} messages: {report['branch_at_end_p50_ms']} ms "
            f"(10 messages: {report['branch_short_history_p50_ms']} ms); history read "
            f"{report['history_read_no_branch_p50_ms']} ms without a branch "
            f"(before branches: {report['history_read_before_branches_p50_ms']} ms), "
            f"{report['history_read_in_branch_p50_ms']} ms in one"
        )
