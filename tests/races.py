"""Racing calls against the real database: one thread per caller, released together."""

from __future__ import annotations

import threading

from django.db import connection


def race(clients, call):
    """Run ``call(client, i)`` in one thread per client, released together by a barrier;
    their results in order. Each thread uses (and closes) its own database connection, so
    the test must commit (``transactional_db``) for PostgreSQL's locking to decide."""
    barrier = threading.Barrier(len(clients))
    results: list = [None] * len(clients)
    errors: list[BaseException] = []

    def worker(i, client):
        try:
            barrier.wait(timeout=30)
            results[i] = call(client, i)
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i, c)) for i, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a racing request hung"
    assert not errors, errors
    return results
