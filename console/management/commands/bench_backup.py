"""``bench_backup --messages 100000 --json``: export, restore and verify times of a tenant
with that many chat messages, and the archive's size (``console.backup.bench``)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from console.backup import bench
from console.bootstrap import migrate_quietly


class Command(BaseCommand):
    help = "Measure a tenant backup's export, restore and verify times."

    def add_arguments(self, parser):
        parser.add_argument("--messages", type=int, default=100_000)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, messages, **options):
        migrate_quietly()
        report = bench.measure(max(messages, 2))
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self.stdout.write(
            f"{report['messages']} messages ({report['rows']} rows): "
            f"export {report['export_s']} s, "
            f"archive {report['archive_bytes']} bytes, restore {report['restore_s']} s, "
            f"verify {report['verify_s']} s, tables equal: {report['tables_equal']}"
        )
