"""``python manage.py bench_worldbook --entries 5000 --json``: compile, select, import and
editor timings.

Prints compile time per revision, selection latency in-process and through
``POST /v1/context/select`` on a live daphne server, the naive baseline (every key of every
entry searched as a plain loop) with the speed ratio, the import time of a SillyTavern
file of the same size, and the book editor's server time (first page cold and warm, a
search, a bulk edit of a fifth of the book with its publish; see ``worldbook/bench/editor``).
With ``--books N`` (up to 20), also N such books bound to one prompt: a turn's worldbook work,
the first turn of a cold process and after a publish, memory, and the select API over all N
(``worldbook/bench/multi``). Data goes to a throwaway tenant that is deleted at the end.
"""

from __future__ import annotations

import json
import statistics
import time
import uuid

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from console.bootstrap import migrate_quietly
from console.live_server import running_daphne
from console.models import Tenant
from console.services import create_api_token
from worldbook import services
from worldbook.bench import editor, multi
from worldbook.bench.editor import percentiles
from worldbook.bench.synthetic import queries, sillytavern_file, synthetic_book
from worldbook.engine import matcher
from worldbook.engine.naive import naive_activate
from worldbook.engine.schema import BookIn, SelectRequest
from worldbook.engine.selection import LoadedBook, select
from worldbook.tokenizer import CL100K

IMPORTS = 3


class Command(BaseCommand):
    help = "Benchmark worldbook compile, selection (in-process and HTTP), import and editor."

    def add_arguments(self, parser):
        parser.add_argument("--entries", type=int, default=5000)
        parser.add_argument("--selections", type=int, default=300)
        parser.add_argument("--http-selections", type=int, default=200)
        parser.add_argument("--editor-samples", type=int, default=30)
        parser.add_argument(
            "--books", type=int, default=1, help="also bind this many books to one prompt"
        )
        parser.add_argument("--turns", type=int, default=200, help="turns over the bound books")
        parser.add_argument("--json", action="store_true")

    def handle(
        self, *args, entries, selections, http_selections, editor_samples, json=False, **opts
    ):
        if not 1 <= opts["books"] <= 20:
            raise CommandError("--books 1..20 (a prompt binds at most 20 books)")
        migrate_quietly()
        book = synthetic_book(entries)
        model = BookIn.model_validate(book)
        tenant = Tenant.objects.create(name=f"bench-{uuid.uuid4().hex[:8]}")
        try:
            report = self._run(tenant, book, model, selections, http_selections)
            report["editor"] = editor.run(tenant, entries, editor_samples)
            if opts["books"] > 1:
                report["bound_books"] = multi.run(
                    tenant, opts["books"], entries, opts["turns"], http_selections
                )
        finally:
            tenant.delete()
        if json:
            self.stdout.write(_dumps(report))
        else:
            for key, value in report.items():
                self.stdout.write(f"{key:28} {value}")

    def _run(self, tenant, book, model, selections, http_selections) -> dict:
        stored, revision = services.create_book(tenant, model)
        loaded = LoadedBook(str(stored.id), 1, revision.content_hash, model.entries)
        compile_ms = []
        for n in range(5):
            matcher.clear_cache()
            started = time.perf_counter()
            matcher.compile_book(loaded.book_id, f"{loaded.content_hash}-{n}", loaded.entries)
            compile_ms.append((time.perf_counter() - started) * 1000)
        inputs = queries(book, selections)
        requests = [
            SelectRequest(books=[{"book_id": loaded.book_id, "revision": 1}], **q) for q in inputs
        ]
        select(requests[0], [loaded], tokenizer=CL100K)  # warm the compiled revision
        engine_ms, naive_ms = [], []
        for request in requests:
            started = time.perf_counter()
            select(request, [loaded], tokenizer=CL100K)
            engine_ms.append((time.perf_counter() - started) * 1000)
        for request in requests[: max(len(requests) // 3, 10)]:
            started = time.perf_counter()
            naive_activate(request, [loaded])
            naive_ms.append((time.perf_counter() - started) * 1000)
        http = self._http(tenant, loaded, inputs[:http_selections])
        st_bytes = _dumps(sillytavern_file(book)).encode()
        import_s = []
        for n in range(IMPORTS):  # trailing spaces: another file to the importer's dedupe
            started = time.perf_counter()
            services.import_files(tenant, [services.Upload("bench.json", st_bytes + b" " * n)])
            import_s.append(time.perf_counter() - started)
        engine = percentiles(engine_ms)
        naive = percentiles(naive_ms)
        return {
            "entries": len(model.entries),
            # The median of five compiles, and each: one slow run on a shared machine is noise.
            "compile_ms": round(statistics.median(compile_ms), 1),
            "compile_ms_runs": [round(ms, 1) for ms in compile_ms],
            "select_in_process_ms": engine,
            "select_http_ms": http,
            "naive_baseline_ms": naive,
            "speedup_vs_naive_p50": round(naive["p50"] / max(engine["p50"], 1e-6), 1),
            # The median of three imports of the file (the first in a fresh process), and each.
            "import_sillytavern_s": round(statistics.median(import_s), 3),
            "import_sillytavern_s_runs": [round(v, 3) for v in import_s],
            "import_file_bytes": len(st_bytes),
            "targets": {
                "in_process_p50_ms": 5,
                "in_process_p99_ms": 20,
                "http_p50_ms": 30,
                "speedup": 20,
                "import_s": 1,
            },
        }

    def _http(self, tenant, loaded, inputs) -> dict:
        import http.client

        _token, raw = create_api_token(tenant, "bench", ["content"])
        with running_daphne(settings.DATABASE_URL, settings.REDIS_URL) as server:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            headers = {"Authorization": f"Bearer {raw}", "Content-Type": "application/json"}
            samples = []
            for n, q in enumerate([inputs[0], *inputs]):
                body = _dumps({"books": [{"book_id": loaded.book_id, "revision": 1}], **q})
                started = time.perf_counter()
                conn.request("POST", "/v1/context/select", body=body.encode(), headers=headers)
                response = conn.getresponse()
                response.read()
                elapsed = (time.perf_counter() - started) * 1000
                if response.status != 200:
                    raise RuntimeError(f"select answered {response.status}")
                if n:  # the first request warms the server's cache
                    samples.append(elapsed)
            conn.close()
        return percentiles(samples)


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)
