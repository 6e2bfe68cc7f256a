"""Agent V2's state: reads, the one compare-and-set commit, restores (seed 002).

A conversation's state under a scenario is a numbered series of revisions (every one kept)
and a head row holding the newest number. A commit is compared with the head number the
turn read at its start: one conditional UPDATE moves it on (or, for the first revision, an
INSERT guarded by the unique constraint), and only then are the revision and its ledger
entries written, in the same transaction. A head that moved meanwhile is
``stale_write_rejected``: no rebase, no rerun. After an ambiguous failure the caller may
commit again: a revision of its own already there (same number, source message and text) is
recognised as the earlier success.

Reading goes back past revisions whose source message is gone (a rollback or a deleted
reply) and past revisions **withdrawn** because a message they were built from changed: the
next turn reads the newest revision still in force, and the ledger entries of the revisions
it went past are left out too (beyond the seed, which never rolls the state back). The head
number keeps growing, so numbers never repeat.

A revision is built from the messages its turn read: every message before the turn's reply
(its source message), not the reply itself, which the background never sees. So when a
message with store timestamp ``ts`` is edited, another alternative of it is chosen, or it
is deleted, :func:`withdraw_from` withdraws every revision whose source message comes after
``ts`` (the revision before that message is then in force, as after a rollback), and moves
the head on when it withdrew one or a background run built from the message is still in
flight: that run's commit is then ``stale_write_rejected``, as it read the old text. Edits
and alternatives withdraw in their own transaction (``roleplay.conversations.services.messages``);
deletes, from any door, when the message store's ``messages_deleted`` goes out.

``historyRevision`` is how many times the conversation's history changed shape (edit,
rollback, trim) while this state existed: the head counts the message store's
``history_changed`` signal, and each revision records the count it was written at.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from console import failures
from console.rows import json_value
from memory.models import Message
from memory.signals import history_changed, messages_deleted
from roleplay.errors import NotFound, RoleplayError
from roleplay.models import (
    AgentLedgerEntry,
    AgentStateHead,
    AgentStateRevision,
    Conversation,
    PlanningRun,
    PlanningStatus,
    Scenario,
)

STALE = "stale_write_rejected"


class StaleWrite(RoleplayError, failures.Conflict):
    """The state moved on since the turn read it (409 ``stale_write_rejected``)."""

    default_code = STALE


@dataclass(frozen=True)
class Snapshot:
    """What a turn read at its start: the revision in force (0: none), the head number to
    compare with, and the read shape of the API."""

    revision: int
    head: int
    history_revision: int
    state: str | None
    ledger: list[dict[str, Any]] = field(default_factory=list)
    found: bool = False
    source_turn: int | None = None
    source_message_id: str | None = None
    tools_called: list[str] = field(default_factory=list)

    def as_read(self) -> dict[str, Any]:
        """``{found, revision, sourceTurn, sourceMessageId, historyRevision, state,
        toolsCalled, ledger[]}``, each ledger item ``{type, key, status, payload,
        sourceTool, sourceTurn}`` (seed 002: the source beside the payload that holds it)."""
        return {
            "found": self.found,
            "revision": self.revision,
            "sourceTurn": self.source_turn,
            "sourceMessageId": self.source_message_id,
            "historyRevision": self.history_revision,
            "state": self.state,
            "toolsCalled": list(self.tools_called),
            "ledger": [_read_item(entry) for entry in self.ledger],
        }


def _read_item(entry: dict[str, Any]) -> dict[str, Any]:
    payload = entry.get("payload") if isinstance(entry.get("payload"), dict) else {}
    return {
        **{key: value for key, value in entry.items() if key != "id"},
        "sourceTool": payload.get("sourceTool"),
        "sourceTurn": payload.get("sourceTurn"),
    }


# No state yet (or no scenario to hold one).
EMPTY = Snapshot(revision=0, head=0, history_revision=0, state=None)


def _key(conversation: Conversation, scenario: Scenario) -> dict:
    return {"tenant_id": conversation.tenant_id, "conversation": conversation, "scenario": scenario}


def read_state(
    conversation: Conversation, scenario: Scenario, *, active_ledger: int | None = None
) -> Snapshot:
    """The state in force: the newest revision whose source message still exists, with
    its ledger (every entry up to it; or, with ``active_ledger``, only the newest that many
    active ones, all a prompt's projection reads). One statement (:func:`state_sql`); a
    turn reads it within its first read instead (``roleplay.turns.reads``)."""
    with connection.cursor() as cursor:
        cursor.execute(
            state_sql("%(tenant)s", "%(conversation)s", "%(scenario)s", "%(limit)s"),
            {
                "tenant": conversation.tenant_id,
                "conversation": conversation.pk,
                "scenario": scenario.pk,
                "limit": active_ledger,
            },
        )
        row = cursor.fetchone()
    return snapshot_of(row)


STATE_COLUMNS = 8  # what a row of :func:`state_sql` holds, for a statement that embeds it


def snapshot_of(row) -> Snapshot:
    """The :class:`Snapshot` a row of :func:`state_sql` holds (None or all-NULL: no state)."""
    if row is None or row[0] is None:
        return EMPTY
    head, history_revision, revision, state, source_turn, source_message, tools, entries = row
    if revision is None:
        return Snapshot(revision=0, head=head, history_revision=history_revision, state=None)
    return Snapshot(
        revision=revision,
        head=head,
        history_revision=history_revision,
        state=state,
        ledger=json_value(entries),  # in write order
        found=True,
        source_turn=source_turn,
        source_message_id=str(source_message) if source_message else None,
        tools_called=list(json_value(tools)),
    )


@cache
def state_sql(tenant: str, conversation: str, scenario: str, limit: str) -> str:
    """The read of the state in force as one SELECT of :data:`STATE_COLUMNS` columns, for
    the SQL expressions (placeholders or another statement's columns) given: the tenant,
    conversation and scenario ids, and the number of newest active ledger entries to read
    (NULL: every entry)."""
    head, revision, entry = (
        m._meta.db_table for m in (AgentStateHead, AgentStateRevision, AgentLedgerEntry)
    )
    message = Message._meta.db_table
    return f"""
        SELECT h.revision, h.history_revision, r.revision, r.state, r.source_turn,
               r.source_message_id, r.tools_called,
               COALESCE((
                   SELECT json_agg(json_build_object(
                       'id', e.id, 'type', e.type, 'key', e.key, 'status', e.status,
                       'payload', e.payload
                   ) ORDER BY e.id)
                   FROM (
                       SELECT * FROM {entry} e
                       WHERE e.conversation_id = h.conversation_id
                         AND e.scenario_id = h.scenario_id AND e.revision <= r.revision
                         AND ({limit}::int IS NULL OR e.status = 'active')
                         -- not the entries of a revision out of force: withdrawn, or whose
                         -- reply is gone (rolled back)
                         AND NOT EXISTS (
                             SELECT 1 FROM {revision} gone
                             WHERE gone.conversation_id = e.conversation_id
                               AND gone.scenario_id = e.scenario_id
                               AND gone.revision = e.revision
                               AND (gone.withdrawn_at IS NOT NULL
                                    OR gone.source_message_id IS NOT NULL AND NOT EXISTS (
                                        SELECT 1 FROM {message} m
                                        WHERE m.id = gone.source_message_id
                                    ))
                         )
                       ORDER BY e.id DESC
                       LIMIT {limit}
                   ) e
               ), '[]'::json)
        FROM {head} h
        LEFT JOIN LATERAL (
            SELECT * FROM {revision} r
            WHERE r.conversation_id = h.conversation_id AND r.scenario_id = h.scenario_id
              AND r.withdrawn_at IS NULL
              AND (r.source_message_id IS NULL
                   OR EXISTS (SELECT 1 FROM {message} m WHERE m.id = r.source_message_id))
            ORDER BY r.revision DESC
            LIMIT 1
        ) r ON TRUE
        WHERE h.tenant_id = {tenant} AND h.conversation_id = {conversation}
          AND h.scenario_id = {scenario}
    """


def commit(
    conversation: Conversation,
    scenario: Scenario,
    *,
    expected_head: int,
    state: str,
    tools_called: list[str],
    source_turn: int,
    source_message_id,
    ledger_entries: list[dict[str, Any]] = (),  # type: ignore[assignment]
    origin: str = "director",
) -> int:
    """Write ``state`` as revision ``expected_head + 1`` if the head is still
    ``expected_head``; the new revision. Raises :class:`StaleWrite` otherwise."""
    key = _key(conversation, scenario)
    new = expected_head + 1
    try:
        with transaction.atomic():
            if expected_head == 0:
                try:
                    with transaction.atomic():
                        head = AgentStateHead.objects.create(**key, revision=1)
                except IntegrityError:
                    moved = AgentStateHead.objects.filter(**key, revision=0).update(
                        revision=1, updated_at=timezone.now()
                    )
                    if not moved:
                        raise _StaleInside() from None
                    head = AgentStateHead.objects.get(**key)
            else:
                moved = AgentStateHead.objects.filter(**key, revision=expected_head).update(
                    revision=F("revision") + 1, updated_at=timezone.now()
                )
                if not moved:
                    raise _StaleInside()
                head = AgentStateHead.objects.get(**key)
            AgentStateRevision.objects.create(
                **key,
                revision=new,
                state=state,
                tools_called=list(tools_called),
                source_turn=source_turn,
                source_message_id=source_message_id,
                history_revision=head.history_revision,
                origin=origin,
            )
            AgentLedgerEntry.objects.bulk_create(
                [
                    AgentLedgerEntry(
                        **key,
                        revision=new,
                        type=entry["type"],
                        key=entry["key"],
                        status=entry.get("status", "active"),
                        payload=entry.get("payload", {}),
                    )
                    for entry in ledger_entries
                ]
            )
    except _StaleInside:
        if _already_mine(key, new, state, source_message_id):
            return new
        raise StaleWrite(
            message="the state moved on since this turn read it; the result is not written",
            details={"expected_revision": expected_head},
        ) from None
    return new


def restore(conversation: Conversation, scenario: Scenario, revision: int, *, expected_head: int):
    """A new revision with the text of ``revision`` (an operator's restore)."""
    old = AgentStateRevision.objects.filter(
        **_key(conversation, scenario), revision=revision
    ).first()
    if old is None:
        raise NotFound(message=f"there is no state revision {revision}")
    return commit(
        conversation,
        scenario,
        expected_head=expected_head,
        state=old.state,
        tools_called=[],
        source_turn=old.source_turn,
        source_message_id=None,
        origin="restore",
    )


class _StaleInside(Exception):
    """The head moved: leave the transaction, then look for an earlier success."""


def _already_mine(key: dict, revision: int, state: str, source_message_id) -> bool:
    return AgentStateRevision.objects.filter(
        **key, revision=revision, state=state, source_message_id=source_message_id
    ).exists()


def withdraw_from(tenant_id, conversation_id, ts: int | None) -> int:
    """Withdraw the conversation's revisions built from its message at ``ts`` (None: from
    every message), under every scenario; the number withdrawn. Moves the heads on when
    one was withdrawn or a background run that read the message is still in flight."""
    later = Message.objects.filter(pk=OuterRef("source_message_id"))
    running = PlanningRun.objects.filter(
        conversation_id=conversation_id, status__in=(PlanningStatus.QUEUED, PlanningStatus.RUNNING)
    )
    if ts is not None:
        later = later.filter(ts__gt=ts)
        replies = Message.objects.filter(pk=OuterRef("assistant_message_id"), ts__gt=ts)
        running = running.filter(Exists(replies))
    withdrawn = AgentStateRevision.objects.filter(
        Exists(later), tenant_id=tenant_id, conversation_id=conversation_id,
        withdrawn_at__isnull=True,
    ).update(withdrawn_at=timezone.now())  # fmt: skip
    in_flight = set(running.values_list("scenario_id", flat=True))
    if withdrawn or in_flight:
        heads = AgentStateHead.objects.filter(tenant_id=tenant_id, conversation_id=conversation_id)
        heads.update(revision=F("revision") + 1, updated_at=timezone.now())
        for scenario_id in in_flight - set(heads.values_list("scenario_id", flat=True)):
            _start_head(tenant_id, conversation_id, scenario_id)
    return withdrawn


def _start_head(tenant_id, conversation_id, scenario_id) -> None:
    """A head at 1 for a state with no revision yet, so that a run in flight (comparing
    with 0) finds it moved; one made meanwhile by a commit is moved on instead."""
    key = {"tenant_id": tenant_id, "conversation_id": conversation_id, "scenario_id": scenario_id}
    try:
        with transaction.atomic():
            AgentStateHead.objects.create(**key, revision=1)
    except IntegrityError:
        AgentStateHead.objects.filter(**key).update(
            revision=F("revision") + 1, updated_at=timezone.now()
        )


def _conversation_id(session_id) -> uuid.UUID | None:
    """The conversation a message store session is (its id), or None."""
    try:
        return uuid.UUID(str(session_id))
    except ValueError:  # every conversation (None), or a store session of no conversation
        return None


def _deleted(sender, *, tenant, session_id, timestamps, **_) -> None:
    """Messages were deleted: withdraw what was built from the earliest of them (from all,
    when the whole conversation was cleared: its replies are gone too)."""
    conversation_id = _conversation_id(session_id)
    if conversation_id is not None:
        withdraw_from(tenant.pk, conversation_id, min(timestamps) if timestamps else None)


def _history_changed(sender, *, tenant, session_id, **_) -> None:
    """Count a change of the conversation's history on every state it holds."""
    conversation_id = _conversation_id(session_id)
    if conversation_id is None:
        return
    AgentStateHead.objects.filter(tenant=tenant, conversation_id=conversation_id).update(
        history_revision=F("history_revision") + 1
    )


history_changed.connect(_history_changed, dispatch_uid="roleplay.agent_state.history")
messages_deleted.connect(_deleted, dispatch_uid="roleplay.agent_state.deleted")
