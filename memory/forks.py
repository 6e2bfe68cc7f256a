"""Forked sessions: a session that begins with another session's history up to a point,
sharing those messages instead of copying them.

A fork's lineage is its ancestors' ``(session_id, upto_ts)`` pairs, the root first, then the
session itself (up to every message it will ever hold). Its history is each ancestor's
messages with ``ts <= upto_ts``, in lineage order, followed by its own: the order is the
segment first, the store's ``ts`` within a segment. A fork of a fork takes its parent's
lineage cut at the fork point, so it never reads a session further than its parent did.

Every read of the history (``memory.selectors``) resolves the lineage in the statement that
reads the messages (:data:`SEGMENTS_SQL`): a session that is no fork pays one index probe
of an empty lookup, not a round trip.

A message an ancestor shares with a fork is frozen while the fork exists: editing it,
choosing another alternative of it or deleting it would change a history the fork holds
without the fork's layers (Agent V2, Story, Compact) hearing of it, so
:func:`refuse_shared` makes those writes a 409 ``message_shared`` (docs/branches.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection
from django.db.models import Case, IntegerField, Q, Value, When

from memory.errors import MessageNotFound, MessageShared
from memory.models import Message, SessionFork

MAX_TS = 2**63 - 1
OWN = 2**31 - 1  # the session's own segment comes after every ancestor's

Lineage = list[tuple[str, int]]

SEGMENTS_SQL = f"""
    SELECT %(session)s::text AS sid, {MAX_TS}::bigint AS upto, {OWN}::bigint AS pos
    UNION ALL
    SELECT a.value ->> 0, (a.value ->> 1)::bigint, a.ordinality
    FROM {SessionFork._meta.db_table} f
    CROSS JOIN LATERAL jsonb_array_elements(f.ancestors) WITH ORDINALITY a
    WHERE f.tenant_id = %(tenant)s AND f.session_id = %(session)s
"""
"""The segments of a session's history (``sid``, ``upto``, ``pos``), for a statement that
binds ``%(tenant)s`` and ``%(session)s``."""


def ancestors_of(tenant, session_id: str) -> Lineage:
    """The ``(session_id, upto_ts)`` pairs a session shares, the root first (none: no fork)."""
    row = SessionFork.objects.filter(tenant=tenant, session_id=session_id).first()
    return [(str(s), int(t)) for s, t in row.ancestors] if row is not None else []


def lineage(tenant, session_id: str) -> Lineage:
    """The session's ancestors, then itself."""
    return [*ancestors_of(tenant, session_id), (session_id, MAX_TS)]


def history_filter(segments: Sequence[tuple[str, int]]) -> Q:
    """The messages of ``segments`` as one filter of the message table."""
    q = Q(pk__in=[])
    for session_id, upto in segments:
        q |= Q(session_id=session_id, ts__lte=upto) if upto < MAX_TS else Q(session_id=session_id)
    return q


def segment_order(segments: Sequence[tuple[str, int]]) -> Case:
    """The position of a message's segment in ``segments`` (what orders a history first)."""
    whens = [When(session_id=s, then=Value(i)) for i, (s, _) in enumerate(segments)]
    return Case(*whens, default=Value(len(segments)), output_field=IntegerField())


def find(tenant, session_id: str, message_id) -> Message | None:
    """The message ``message_id`` of the session's history: its own, or an ancestor's up to
    the fork point (None: not in it)."""
    message = Message.objects.filter(tenant=tenant, pk=message_id).first()
    if message is None:
        return None
    for session, upto in lineage(tenant, session_id):
        if message.session_id == session and message.ts <= upto:
            return message
    return None


def fork(tenant, parent_session: str, child_session: str, at: Message, *, before=False):
    """Make ``child_session`` a fork of ``parent_session`` whose history ends with ``at``
    (with ``before``: just before it), a message of the parent's history; its ancestors.
    Raises :class:`MessageNotFound` when ``at`` is not in that history."""
    parent = lineage(tenant, parent_session)
    for i, (session, upto) in enumerate(parent):
        if at.session_id == session and at.ts <= upto:
            ancestors = [*parent[:i], (session, at.ts - 1 if before else at.ts)]
            break
    else:
        raise MessageNotFound("message_not_found", "the message is not in this conversation")
    SessionFork.objects.create(
        tenant=tenant, session_id=child_session, ancestors=[list(a) for a in ancestors]
    )
    return ancestors


_SHARED_SQL = f"""
    SELECT f.session_id FROM {SessionFork._meta.db_table} f
    CROSS JOIN LATERAL jsonb_array_elements(f.ancestors) a
    WHERE f.tenant_id = %s AND a.value ->> 0 = %s AND (a.value ->> 1)::bigint >= %s
    LIMIT 1
"""


def shared_with(tenant, session_id: str, from_ts: int) -> str | None:
    """A fork that shares the session's message at ``from_ts`` or a later one, or None."""
    with connection.cursor() as cursor:
        cursor.execute(_SHARED_SQL, [tenant.pk, session_id, int(from_ts)])
        row = cursor.fetchone()
    return row[0] if row else None


def refuse_shared(tenant, session_id: str, from_ts: int) -> None:
    """Raise :class:`MessageShared` when a fork shares the message at ``from_ts`` (or a later
    one) of the session: it is frozen while the fork lives."""
    fork_id = shared_with(tenant, session_id, from_ts)
    if fork_id is not None:
        raise MessageShared(
            "message_shared",
            "a branch shares this message: change it in a new branch instead",
            details={"branch": fork_id},
        )


def forget(tenant, session_ids: Sequence[str]) -> None:
    """The sessions are gone: they are nobody's fork any more."""
    SessionFork.objects.filter(tenant=tenant, session_id__in=list(session_ids)).delete()
