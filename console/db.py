"""Database work for async code, on a pool of threads instead of one.

``sync_to_async`` runs ORM code on a single thread per process (``thread_sensitive``), so
under load every socket's database work waits behind every other's, one round trip at a
time. The chat turn's reads and writes need no thread affinity: ``run_db`` runs them on a
small pool of threads, each taking a connection from Django's connection pool for the call
and giving it back after, so several turns' queries are in PostgreSQL at once.

Use it only for self-contained units of work (a function that opens and commits its own
transaction); anything that must share a transaction with the caller stays on
``sync_to_async``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from django.conf import settings
from django.db import close_old_connections

P = ParamSpec("P")
T = TypeVar("T")


@functools.lru_cache(maxsize=1)
def _executor() -> ThreadPoolExecutor:
    # Two connections stay for the rest of the process (the thread-sensitive executor's,
    # and a spare for management work), the remainder of the pool serves these threads.
    threads = max(settings.DB_POOL_MAX_SIZE - 2, 2)
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="db")


def _in_thread(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    close_old_connections()
    try:
        return fn(*args, **kwargs)
    finally:
        close_old_connections()


async def run_db(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``await run_db(fn, *args)``: ``fn(*args)`` on a database thread, context preserved."""
    context = contextvars.copy_context()
    call = functools.partial(context.run, _in_thread, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_executor(), call)


RECONNECT_DELAY_MAX_S = 2.0


def cap_reconnect_delay(limit: float = RECONNECT_DELAY_MAX_S) -> None:
    """psycopg's pool retries a database that went away with a delay that doubles without
    bound (1, 2, 4 … 64 s), so after a restart of half a minute the pool could take another
    half minute to notice it is back, and every turn meanwhile fails. Capped, a restarted
    database is in use again within ``limit`` seconds; one connection attempt per
    ``limit`` seconds against a down server costs nothing."""
    from psycopg_pool.base import AttemptWithBackoff

    original = AttemptWithBackoff.update_delay
    if getattr(original, "capped", False):
        return

    def update_delay(self: AttemptWithBackoff, now: float) -> None:
        original(self, now)
        self.delay = min(self.delay, limit)

    update_delay.capped = True  # type: ignore[attr-defined]
    AttemptWithBackoff.update_delay = update_delay  # type: ignore[method-assign]
