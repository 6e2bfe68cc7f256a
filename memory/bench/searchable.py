"""Commit to searchable through the product's task path: a turn's two messages are saved in
one transaction, the caller's ``enqueue`` (the runtime's own "index this turn once it
commits" hook) queues ``memory.index_messages`` on commit, a real Celery worker
(:mod:`worker`) runs it, and the clock stops when both messages are in the recall index.

The clock starts at the end of the transaction's block (so it holds the commit, the
on-commit enqueue, the queue, the worker and its indexing); the index is polled every
:data:`POLL_S`. Each message is then searched for with its own text, to check that recall
returns it. The first turn warms the worker and is not counted.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from django.db import transaction

from memory.bench.ingest import Owner
from memory.bench.stats import summary
from memory.models import RecallItem
from memory.recall.search import RecallQuery, recall
from memory.services import save_message

POLL_S = 0.005
TIMEOUT_S = 30.0
WORDS = ("amber", "quartz", "violet", "cobalt", "saffron", "jade", "copper", "ivory", "onyx")


def _turn_texts(number: int) -> tuple[str, str]:
    token = uuid.uuid4().hex[:8]
    word = WORDS[number % len(WORDS)]
    return (
        f"Probe {number}: did you keep the {word} lantern {token} for me?",
        f"I kept the {word} lantern {token} on the shelf by the door.",
    )


def measure(owner: Owner, turns: int, enqueue: Callable[[list], None]) -> dict:
    """``turns`` timed turns (after one warm-up turn): commit-to-searchable summary, the
    turns found by recall afterwards, and those never indexed within :data:`TIMEOUT_S`."""
    timings: list[float] = []
    found = timeouts = 0
    for number in range(turns + 1):
        user_text, assistant_text = _turn_texts(number)
        with transaction.atomic():
            user = save_message(owner.tenant, owner.session_id, role="user", content=user_text)
            assistant = save_message(
                owner.tenant, owner.session_id, role="assistant", content=assistant_text
            )
            enqueue([user.pk, assistant.pk])
            started = time.perf_counter()
        elapsed = _wait_indexed([user.pk, assistant.pk], started)
        if number == 0:
            if elapsed is None:
                raise RuntimeError(f"the warm-up turn was not indexed within {TIMEOUT_S:g} s")
            continue
        if elapsed is None:
            timeouts += 1
            continue
        timings.append(elapsed)
        query = RecallQuery(query=user_text, k=5, conversation_id=owner.session_id)
        items = recall(owner.tenant, owner.player, query)["items"]
        found += any(str(user.pk) in item["message_ids"] for item in items)
    return {
        "turns": turns,
        "commit_to_searchable_ms": summary(timings),
        "found_by_recall": found,
        "timeouts": timeouts,
    }


def _wait_indexed(message_ids: list, started: float) -> float | None:
    """Milliseconds from ``started`` until every message has an index row; None on timeout."""
    while True:
        if RecallItem.objects.filter(message_id__in=message_ids, chunk=0).count() == len(
            message_ids
        ):
            return (time.perf_counter() - started) * 1000
        if time.perf_counter() - started > TIMEOUT_S:
            return None
        time.sleep(POLL_S)
