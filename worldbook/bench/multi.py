"""What ``bench_worldbook --books N`` measures: N synthetic books bound to one prompt.

The books are the single-book benchmark's generator with seeds 100, 101, …; all are bound
to one prompt id, as a character's books are. Measured:

- ``prepare_ms``: preparing one revision as the worker does on publish or on a binding
  change (``worldbook.compiled.warm``: from the form its publish stored, every block's
  tokens counted, the shared file written), and ``load_ms``: a process reading that file;
- ``inline_prepare_ms``: preparing one revision as a turn does when nothing is prepared
  (``compiled.get`` with no file and no stored form: the content read, records, automata,
  BM25), five times over the same revision, with its parts (``inline_prepare_parts_ms``,
  medians) and the process's CPU time (``..._cpu_ms``: steadier than wall time on a busy
  machine); ``stored_load_ms``: loading it from the form its publish stored (no file), and
  ``publish_store_ms``: what storing that form adds to a publish (``compiled.store``);
- ``turn_ms``: a turn's worldbook work in a warm process, exactly what the chat turn's hook
  runs (``roleplay.worldbook_plugin.context``): the bound revisions in one read, hybrid recall,
  selection against the conversation's timed effects (kept by compare-and-set), the trace's
  notable exclusions;
- ``cold_process_first_turn_ms``: the same in a process that holds nothing yet (it reads N
  shared files); ``first_turn_after_publish_ms``: after a new revision of one bound book is
  published and warmed by the worker; ``..._unwarmed_ms`` when no worker got to it;
  ``first_turn_after_publish_worker_stopped_ms``: after a new revision of *every* bound
  book is published and no worker prepares any (their files removed, nothing in memory):
  the turn loads the N forms the publishes stored (with its CPU time);
  ``first_turn_nothing_prepared_ms``: the same with the stored forms removed too, so the
  turn prepares all N from their content;
- ``memory``: a fresh process reading the N shared files: its resident size before and
  after (so what one prepared revision adds), and the daphne child's after serving the API;
- ``http_select_ms``: ``POST /v1/context/select`` over the N books on a live daphne, with the
  compact answers (``decisions: "selected"``, ``"matched"``) and the full one.
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time

import psutil
from django.conf import settings

from console.live_server import running_daphne
from console.search.lexical import LexicalIndex
from console.services import create_api_token
from worldbook import compiled, services
from worldbook.bench.editor import percentiles
from worldbook.bench.synthetic import queries, synthetic_book
from worldbook.engine.entry import compact_stored
from worldbook.engine.gc_pause import paused_gc
from worldbook.engine.matcher import CompiledBook
from worldbook.engine.prepared import lexical_docs
from worldbook.engine.schema import BookIn, SelectRequest
from worldbook.indexing import embedding_version
from worldbook.models import Book, BookRevision, PreparedRevision
from worldbook.retrieval import select_result
from worldbook.selectors import bound_revisions

PROMPT_ID = "bench-prompt"
CONVERSATION = "bench-conversation"
TURN_TOKEN_BUDGET = 2400  # a scenario's worldbook default (roleplay.scenarios.worldbook_config)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def turn_work(tenant, query: dict, n: int) -> dict:
    """One turn's worldbook work, as the chat turn's hook does it."""
    bound = bound_revisions(tenant, PROMPT_ID, embedding_version())
    request = SelectRequest(
        books=[b.ref() for b in bound],
        query=query["query"],
        history=query["history"],
        state=query["state"],
        audience="actor",
        strategy="hybrid",
        token_budget=TURN_TOKEN_BUDGET,
        seed=f"turn-{n}",
        conversation_id=CONVERSATION,
        message_index=n,
    )
    with paused_gc():  # as the hook does: the selection's objects die before it resumes
        result = select_result(tenant, request, record=True, bound=bound)
        summary = {"blocks": len(result.blocks), "excluded": len(result.excluded(100))}
        del result
    return summary


def run(tenant, books: int, entries: int, turns: int, http_samples: int) -> dict:
    keys = []  # (book id, revision, content hash): no stored content stays referenced here
    started = time.perf_counter()
    for seed in range(100, 100 + books):
        model = BookIn.model_validate(synthetic_book(entries, seed=seed))
        book, revision = services.create_book(tenant, model)
        keys.append((str(book.id), 1, revision.content_hash))
    del model, book, revision
    create_s = round(time.perf_counter() - started, 1)
    services.put_bindings(tenant, PROMPT_ID, [{"book_id": key[0]} for key in keys])
    prepare_ms = []
    for key in keys:  # what the worker does after the binding change (it holds nothing)
        compiled.forget(key)
        started = time.perf_counter()
        compiled.warm(*key)
        prepare_ms.append(_ms(started))
    inputs = queries(synthetic_book(entries, seed=100), turns + 1)
    compiled.forget()
    gc.collect()
    started = time.perf_counter()
    turn_work(tenant, inputs[0], 0)
    cold_first = _ms(started)
    load_ms = []
    for key in keys[:3]:
        compiled.forget()
        started = time.perf_counter()
        compiled.get(*key)
        load_ms.append(_ms(started))
    turn_work(tenant, inputs[0], 0)  # all held again
    gc.collect()
    samples = []
    for n, query in enumerate(inputs[1:], start=1):
        started = time.perf_counter()
        turn_work(tenant, query, n)
        samples.append(_ms(started))
    inline = _preparation(tenant, keys[0])
    after_publish = _first_turn_after_publish(tenant, keys[0][0], inputs[0], warmed=True)
    unwarmed = _first_turn_after_publish(tenant, keys[0][0], inputs[1], warmed=False)
    stopped_ms, stopped_cpu_ms = _first_turn_after_publishing_all(tenant, keys, inputs[2])
    nothing_ms, nothing_cpu_ms = _first_turn_after_publishing_all(
        tenant, keys, inputs[3], stored=False
    )
    return {
        "books": books,
        "entries_per_book": entries,
        "create_books_s": create_s,
        "prepare_ms": percentiles(prepare_ms),
        "load_ms": percentiles(load_ms),
        "turn_ms": percentiles(samples),
        "cold_process_first_turn_ms": cold_first,
        "inline_prepare_ms": inline["wall"],
        "inline_prepare_cpu_ms": inline["cpu"],
        "inline_prepare_parts_ms": inline["parts"],
        "stored_load_ms": inline["stored"],
        "publish_store_ms": inline["store"],
        "first_turn_after_publish_ms": after_publish,
        "first_turn_after_publish_unwarmed_ms": unwarmed,
        "first_turn_after_publish_worker_stopped_ms": stopped_ms,
        "first_turn_after_publish_worker_stopped_cpu_ms": stopped_cpu_ms,
        "first_turn_nothing_prepared_ms": nothing_ms,
        "first_turn_nothing_prepared_cpu_ms": nothing_cpu_ms,
        "memory": {
            **_fresh_process_memory(keys),
            "shared_file_mb": round(compiled.path_for(*keys[1]).stat().st_size / 2**20, 1),
        },
        "http_select_ms": _http(tenant, keys, inputs[:http_samples]),
        "targets": {
            "turn_p50_ms": 20,
            "turn_p99_ms": 60,
            "first_turn_after_publish_ms": 500,
            "inline_prepare_ms": 100,
            "first_turn_after_publish_worker_stopped_ms": 2000,
            "http_compact_p50_ms": 30,
            "process_rss_mb": 300,
        },
    }


_MEMORY_PROBE = """
import gc, json, sys, time
import django, psutil
django.setup()
from worldbook import compiled
def rss():
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20
before = rss()
started = time.perf_counter()
for key in json.loads(sys.argv[1]):
    compiled.get(key[0], key[1], key[2])
loaded = (time.perf_counter() - started) * 1000
after = rss()
print(json.dumps({"before": before, "after": after, "load_ms": loaded, **compiled.resident()}))
"""


def _fresh_process_memory(keys: list[tuple[str, int, str]]) -> dict:
    """A new Python process with Django set up reads the N shared files: its resident size
    before and after, and the time the reads took (a cold process's first turn spends it)."""
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, json.dumps(keys)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "fresh_process_rss_mb": round(probe["before"], 1),
        "fresh_process_rss_holding_all_mb": round(probe["after"], 1),
        "per_prepared_revision_mb": round((probe["after"] - probe["before"]) / len(keys), 1),
        "fresh_process_load_all_ms": round(probe["load_ms"], 1),
        "entries_held": probe["entries"],
    }


def _first_turn_after_publish(tenant, book_id: str, query: dict, *, warmed: bool) -> float:
    """Publish a new revision of the book (one entry changed); with ``warmed``, prepare it as
    the worker does after the publish; then time the next turn's worldbook work."""
    book = Book.objects.get(pk=book_id)
    content = BookRevision.objects.get(book=book, revision=book.head_revision).content
    content["entries"][0]["content"] += f" (revision {book.head_revision + 1})"
    revision = services.publish_revision(
        tenant, book, BookIn.model_validate(content), book.head_revision
    )
    if warmed:
        compiled.warm(str(book.id), revision.revision, revision.content_hash)
    started = time.perf_counter()
    turn_work(tenant, query, 1000 + revision.revision)
    return _ms(started)


def _unprepared(key, *, stored: bool = True) -> None:
    """As if no worker had prepared the revision: no shared file, not in memory, and
    without ``stored``, no form stored by its publish either."""
    compiled.forget(key)
    compiled.path_for(*key).unlink(missing_ok=True)
    if not stored:
        PreparedRevision.objects.filter(book_id=key[0], revision=key[1]).delete()


def _timed(action, runs: int, setup=None) -> dict:
    """``action()`` ``runs`` times: wall and CPU time of each, the median first."""
    wall, cpu = [], []
    for _ in range(runs):
        if setup is not None:
            setup()
        gc.collect()
        started, began = time.perf_counter(), time.process_time()
        action()
        wall.append(_ms(started))
        cpu.append(round((time.process_time() - began) * 1000, 3))
    return {
        "wall": [round(statistics.median(wall), 1), *wall],
        "cpu": [round(statistics.median(cpu), 1), *cpu],
    }


def _preparation(tenant, key, runs: int = 5) -> dict:
    """One revision, ``runs`` times each: prepared from its content as a turn does when
    nothing is prepared (with the median of each part), loaded from its stored form, and
    stored as its publish stores it. It ends held, its file and stored form written."""
    content = BookRevision.objects.values_list("content", flat=True).get(
        book_id=key[0], revision=key[1]
    )
    entries = BookIn.model_validate(content).entries
    inline = _timed(lambda: compiled.get(*key), runs, lambda: _unprepared(key, stored=False))
    parts: dict[str, list[float]] = {"read": [], "records": [], "automata": [], "bm25": []}
    for n in range(runs):
        started = time.perf_counter()
        content = BookRevision.objects.values_list("content", flat=True).get(
            book_id=key[0], revision=key[1]
        )
        parts["read"].append(_ms(started))
        started = time.perf_counter()
        records = compact_stored(content["entries"])
        parts["records"].append(_ms(started))
        started = time.perf_counter()
        CompiledBook(key[0], f"{key[2]}-bench-{n}", records)
        parts["automata"].append(_ms(started))
        started = time.perf_counter()
        LexicalIndex.build(lexical_docs(records))
        parts["bm25"].append(_ms(started))
    store = _timed(lambda: compiled.store(tenant, *key, entries), runs)
    stored = _timed(lambda: compiled.get(*key), runs, lambda: _unprepared(key))
    compiled.warm(*key)  # its file, as the worker left it
    return {
        **inline,
        "parts": {name: round(statistics.median(v), 1) for name, v in parts.items()},
        "stored": stored["wall"],
        "store": store["wall"],
    }


def _first_turn_after_publishing_all(
    tenant, keys, query: dict, *, stored: bool = True
) -> tuple[float, float]:
    """Publish a new revision of every bound book with no worker preparing any (and,
    without ``stored``, no stored form either), then time the next turn's worldbook work
    (wall, and this process's CPU)."""
    for book_id, _, _ in keys:
        book = Book.objects.get(pk=book_id)
        content = BookRevision.objects.get(book=book, revision=book.head_revision).content
        content["entries"][1]["content"] += f" (revision {book.head_revision + 1})"
        revision = services.publish_revision(
            tenant, book, BookIn.model_validate(content), book.head_revision
        )
        _unprepared((book_id, revision.revision, revision.content_hash), stored=stored)
    gc.collect()
    started, began = time.perf_counter(), time.process_time()
    turn_work(tenant, query, 5000 + 100 * int(stored))
    return _ms(started), round((time.process_time() - began) * 1000, 3)


def _http(tenant, keys, inputs) -> dict:
    import http.client

    _token, raw = create_api_token(tenant, "bench", ["content"])
    headers = {"Authorization": f"Bearer {raw}", "Content-Type": "application/json"}
    refs = [{"book_id": key[0]} for key in keys]
    out: dict = {}
    with running_daphne(settings.DATABASE_URL, settings.REDIS_URL) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        # The full answer (a decision for each of every book's entries) is large: fewer runs.
        for detail, runs in (("selected", inputs), ("matched", inputs), ("all", inputs[:10])):
            samples, size = [], 0
            for n, q in enumerate([runs[0], *runs]):
                body = {"books": refs, **q, "strategy": "hybrid", "decisions": detail}
                started = time.perf_counter()
                conn.request("POST", "/v1/context/select", json.dumps(body), headers)
                response = conn.getresponse()
                payload = response.read()
                elapsed = _ms(started)
                if response.status != 200:
                    raise RuntimeError(f"select answered {response.status}: {payload[:300]!r}")
                if n:  # the first request loads the prepared revisions
                    samples.append(elapsed)
                size = len(payload)
            out[detail] = {**percentiles(samples), "response_bytes": size}
        out["server_rss_mb"] = round(
            psutil.Process(server.process.pid).memory_info().rss / 2**20, 1
        )
        conn.close()
    return out
