"""Server time of the book editor on a large book: the first page, a search, a bulk edit.

Requests go through Django's test client, in this process: the whole server stack (URL
routing, middleware, session, the view, template rendering) without a network, which is the
time a user waits on the server. The first page is measured cold (the process has not seen
the revision: it parses the stored JSON and builds the rows) and warm (what every later page
view costs); the bulk edit disables exactly 1,000 entries chosen by a search and publishes
them as one revision, compare-and-set included.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from django.test import Client

from console.services import ensure_console_user
from worldbook import services
from worldbook.bench.synthetic import synthetic_book
from worldbook.editor import selectors
from worldbook.engine.schema import BookIn

BULK_KEY = "bulk-target"
HX_LIST = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "wb-list"}


def percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {
        "p50": pick(0.50),
        "p95": pick(0.95),
        "p99": pick(0.99),
        "mean": round(statistics.fmean(ordered), 3),
        "n": len(ordered),
    }


def _timed(call: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def _clear_caches() -> None:
    """Forget every parsed revision and draft, as a freshly started process would."""
    for cache in (selectors._revisions, selectors._drafts):
        with cache.lock:
            cache.items.clear()


def editor_book(entries: int) -> dict:
    """The synthetic book, with every fifth entry carrying a key a search finds (1,000 of
    5,000), so the bulk edit selects exactly a fifth of the book."""
    book = synthetic_book(entries)
    for index, entry in enumerate(book["entries"]):
        if index % 5 == 0:
            entry["keys"] = [*entry["keys"], BULK_KEY]
    return book


def run(tenant, entries: int, samples: int) -> dict:
    payload = editor_book(entries)
    book, _ = services.create_book(tenant, BookIn.model_validate(payload))
    user, _ = ensure_console_user(tenant, "bench-editor", None, "operator")
    client = Client()
    client.force_login(user)
    url = f"/console/worldbooks/{book.pk}/"

    def get(path: str, **headers):
        response = client.get(path, **headers)
        if response.status_code != 200:
            raise RuntimeError(f"{path} answered {response.status_code}")
        return response

    _clear_caches()
    cold_ms, _ = _timed(lambda: get(url))
    first_page = [_timed(lambda: get(url))[0] for _ in range(samples)]
    rng = random.Random(3)
    terms = [rng.choice(rng.choice(payload["entries"])["keys"]) for _ in range(samples)]
    search = [_timed(lambda t=term: get(f"{url}?q={t}", **HX_LIST))[0] for term in terms]
    bulk_ms, response = _timed(
        lambda: client.post(
            f"{url}bulk/",
            {"action": "disable", "scope": "filter", "f_q": BULK_KEY, "expected": "1000"},
        )
    )
    book.refresh_from_db()
    if response.status_code != 302 or book.head_revision != 2:
        raise RuntimeError(f"the bulk edit answered {response.status_code}")
    disabled = sum(1 for e in book.revisions.get(revision=2).content["entries"] if not e["enabled"])
    return {
        "entries": entries,
        "first_page_cold_ms": round(cold_ms, 1),
        "first_page_ms": percentiles(first_page),
        "search_ms": percentiles(search),
        "bulk_edit_1000_with_publish_ms": round(bulk_ms, 1),
        "bulk_edit_entries_changed": disabled,
        "targets": {"first_page_p50_ms": 150, "search_p50_ms": 150, "bulk_edit_ms": 2000},
    }
