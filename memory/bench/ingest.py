"""Storing a sample's turns as one conversation and indexing them, as the product does.

Each turn is saved with the message store's own ``save_message`` and then given the data
set's time: ``save_message`` takes no timestamp (the store's ``ts`` is "now, or one more
than the session's latest", so a chat's order is the order of its writes), and recall reads
``ts`` (the order of a hit's neighbours) and ``created_at`` (``since``), so
:func:`store_message` sets both to the session's date, a minute per turn, right after the
save (one UPDATE, no signal). Turns are then indexed two at a time, as a turn's user and
assistant messages are, with ``memory.recall.indexing.index_messages``, the function the
``memory.index_messages`` task runs, called in this process.

Timings per batch: the saves, the indexing, and commit-to-searchable, which here is the
indexing alone (the saves are committed when it starts; no queue in between; see
:mod:`searchable` for the path through a Celery worker).

:func:`analyze` refreshes the planner's statistics of the two tables once the data is in, as
autovacuum would a little later: with the statistics of a table that was nearly empty, the
neighbour read of recall (``search._around``) scans all the tenant's messages for each hit
(hundreds of ms at k=50), which is not the steady state a live table is in.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.db import connection

from memory.bench.locomo import Sample, Turn
from memory.models import Message, RecallItem
from memory.recall.indexing import index_messages
from memory.services import save_message

BATCH = 2  # messages indexed together: a turn's user and assistant message
TURN_SPACING = timedelta(minutes=1)


@dataclass(frozen=True)
class Owner:
    """Who a conversation belongs to, as the recall index records it."""

    tenant: object
    player: object
    character_id: str
    conversation_id: object

    @property
    def session_id(self) -> str:
        return str(self.conversation_id)


@dataclass
class Ingested:
    sample: Sample
    owner: Owner
    message_of: dict[str, str] = field(default_factory=dict)  # dia id -> message id
    dia_of: dict[str, str] = field(default_factory=dict)  # message id -> dia id
    order: list[str] = field(default_factory=list)  # message ids, oldest first
    save_ms: list[float] = field(default_factory=list)  # per batch
    index_ms: list[float] = field(default_factory=list)  # = commit to searchable here

    def text_of(self, dia_id: str) -> str:
        return next((t.text for t in self.sample.turns if t.dia_id == dia_id), "")

    def dia_items(self, items: list[dict]) -> list[list[str]]:
        """Recall's items as the dia ids of this sample's messages each carries."""
        return [[self.dia_of[m] for m in i["message_ids"] if m in self.dia_of] for i in items]


def stamps(turns: Sequence[Turn]) -> list[int]:
    """Each turn's ``ts`` in ms: its session's time plus a minute per turn of the session,
    strictly increasing over the conversation (a session dated before the one before still
    comes after it)."""
    out: list[int] = []
    position: dict[int, int] = {}
    for turn in turns:
        index = position[turn.session] = position.get(turn.session, -1) + 1
        when = turn.when + TURN_SPACING * index
        ts = int(when.timestamp() * 1000)
        out.append(max(ts, out[-1] + 1) if out else ts)
    return out


def store_message(tenant, session_id: str, *, role: str, content: str, ts: int) -> Message:
    """``save_message``, then the data set's time as the message's ``ts`` and
    ``created_at`` (see the module docstring for why)."""
    message = save_message(tenant, session_id, role=role, content=content)
    created = datetime.fromtimestamp(ts / 1000, tz=UTC)
    Message.objects.filter(pk=message.pk).update(ts=ts, created_at=created)
    return message


def index(owner: Owner, message_ids: Sequence) -> int:
    return index_messages(
        owner.tenant,
        session_id=owner.session_id,
        player_id=owner.player.pk,
        character_id=owner.character_id,
        conversation_id=owner.conversation_id,
        message_ids=list(message_ids),
    )


def ingest(sample: Sample, owner: Owner, *, batch: int = BATCH) -> Ingested:
    """Store and index every turn of ``sample`` in ``owner``'s conversation."""
    done = Ingested(sample, owner)
    timed = list(zip(sample.turns, stamps(sample.turns), strict=True))
    for start in range(0, len(timed), batch):
        began = time.perf_counter()
        ids = []
        for turn, ts in timed[start : start + batch]:
            message = store_message(
                owner.tenant, owner.session_id, role=turn.role, content=turn.text, ts=ts
            )
            ids.append(message.pk)
            done.message_of[turn.dia_id] = str(message.pk)
            done.dia_of[str(message.pk)] = turn.dia_id
            done.order.append(str(message.pk))
        saved = time.perf_counter()
        index(owner, ids)
        indexed = time.perf_counter()
        done.save_ms.append((saved - began) * 1000)
        done.index_ms.append((indexed - saved) * 1000)
    return done


def analyze() -> None:
    """``ANALYZE`` the message and recall index tables (see the module docstring)."""
    with connection.cursor() as cursor:
        for model in (Message, RecallItem):
            cursor.execute(f"ANALYZE {model._meta.db_table}")
