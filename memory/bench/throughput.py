"""Ingest through a Celery worker: how many messages a second one worker indexes (the figure
of the goal "ingest >= 200 messages/s per Celery worker"), in the two ways messages reach it.

- ``turns``: ``turns`` turns (the data set's own texts, in pairs, as user and assistant)
  are saved first, each in a transaction of its own whose commit queues
  ``memory.index_messages`` for its two messages through the turn's own hook
  (``enqueue``), on a queue no worker reads yet: a backlog, as after a burst of traffic.
  Then the caller's worker (``make run``'s configuration: two pool processes,
  ``memory.bench.worker``), started and answering pings beforehand, is told to consume
  that queue (``add_consumer``), and the clock runs from then until every message has its
  index row. The worker's start is not counted; the queue's tasks, the database and the
  embedding are.
- ``imported``: then, the worker warm and idle, as many messages saved in another
  conversation and queued as one task, as a chat import does
  (``roleplay.conversations.services.chat_import``): the clock runs from the commit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

from django.db import transaction

from memory.bench.ingest import Owner
from memory.models import RecallItem
from memory.services import save_message

POLL_S = 0.05
TIMEOUT_S = 300.0

Enqueue = Callable[[Owner, list], None]


def measure(
    owners: tuple[Owner, Owner],
    texts: list[str],
    turns: int,
    *,
    enqueue: Enqueue,
    queue: str,
    worker: Callable[[], AbstractContextManager[str]],
) -> dict:
    """``{"turns": figures, "imported": figures}`` (:func:`_figures`) for the turns'
    owner and the import's."""
    from console.celery import app

    by_turn, imported = owners
    ids = []
    for user_text, assistant_text in _pairs(texts, turns):
        with transaction.atomic():
            pair = [_save(by_turn, "user", user_text), _save(by_turn, "assistant", assistant_text)]
            enqueue(by_turn, pair)
        ids += pair
    with worker() as hostname:
        app.control.add_consumer(queue, destination=[hostname], reply=True, timeout=5.0)
        out = {"turns": _figures(by_turn, len(ids), time.perf_counter())}
        with transaction.atomic():
            history = [
                _save(imported, role, text)
                for (user_text, assistant_text) in _pairs(texts, turns)
                for role, text in (("user", user_text), ("assistant", assistant_text))
            ]
            enqueue(imported, history)
        out["imported"] = _figures(imported, len(history), time.perf_counter())
    return out


def _save(owner: Owner, role: str, text: str):
    return save_message(owner.tenant, owner.session_id, role=role, content=text).pk


def _figures(owner: Owner, expected: int, began: float) -> dict:
    """Wait until ``expected`` messages of ``owner`` are indexed (or :data:`TIMEOUT_S`):
    ``{messages, seconds, messages_per_s, indexed, timed_out}``."""
    rows = RecallItem.objects.filter(tenant=owner.tenant, session_id=owner.session_id, chunk=0)
    indexed = 0
    while time.perf_counter() - began < TIMEOUT_S:
        indexed = rows.count()
        if indexed == expected:
            break
        time.sleep(POLL_S)
    seconds = time.perf_counter() - began
    return {
        "messages": expected,
        "seconds": round(seconds, 2),
        "messages_per_s": round(indexed / seconds, 1) if seconds else None,
        "indexed": indexed,
        "timed_out": indexed < expected,
    }


def _pairs(texts: list[str], turns: int) -> Iterator[tuple[str, str]]:
    """``turns`` (user, assistant) texts from ``texts``, cycled when they are too few."""
    texts = texts or ["Hello.", "Hello to you."]
    for number in range(turns):
        yield texts[(2 * number) % len(texts)], texts[(2 * number + 1) % len(texts)]
