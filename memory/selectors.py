"""Reads of the message store (seed 001): history, full history, ranges, cross-session."""

from __future__ import annotations

from django.db.models import Q

from console.rows import prepared
from console.scoping import is_uuid
from memory import forks
from memory.models import MemoryMetadata, Message, SessionFork

DEFAULT_HISTORY_LIMIT = 50
CROSS_SESSION_MAX_LIMIT = 1000


def _latest(tenant, session_id: str, limit: int, *, archived: bool = False) -> list[Message]:
    """The history rule: the latest ``limit`` unarchived messages (newest first), of a
    fork's ancestors too up to its fork point (``memory.forks``); with ``archived``, the
    archived ones as well."""
    segments = forks.lineage(tenant, session_id)
    qs = Message.objects.filter(forks.history_filter(segments), tenant=tenant)
    if not archived:
        qs = qs.filter(archived=False)
    qs = qs.annotate(segment=forks.segment_order(segments)).order_by("-segment", "-ts")
    return list(qs[: max(int(limit), 0)])


def get_history(tenant, session_id: str, limit: int = DEFAULT_HISTORY_LIMIT) -> list[Message]:
    """Latest ``limit`` unarchived messages, returned in ascending time."""
    return list(reversed(_latest(tenant, session_id, limit)))


# The chat turn's two reads of the store as SQL: the ORM spends more time building these
# statements than PostgreSQL spends running them. tests/fastpaths/test_turn_reads.py pins each to
# its ORM twin (``_latest`` for the history; a filtered ``count()`` for the message count).
# Each reads a fork's ancestors in the same statement (``forks.SEGMENTS_SQL``).
def _newest_of_lineage(*columns: str) -> str:
    """A statement reading ``columns`` (expressions of the message ``x``, each ``AS`` a
    name) of a session's newest unarchived messages, a fork's ancestors' up to the fork
    point too, newest first; it binds ``%(tenant)s``, ``%(session)s`` and ``%(limit)s``."""
    names = ", ".join(f"m.{column.rsplit(' AS ', 1)[1]}" for column in columns)
    return f"""
    SELECT {names} FROM ({forks.SEGMENTS_SQL}) s
    CROSS JOIN LATERAL (
        SELECT x.ts AS ts_order, {", ".join(columns)}
        FROM {Message._meta.db_table} x
        WHERE x.tenant_id = %(tenant)s AND x.session_id = s.sid AND NOT x.archived
          AND x.ts <= s.upto
        ORDER BY x.ts DESC LIMIT %(limit)s
    ) m
    ORDER BY s.pos DESC, m.ts_order DESC LIMIT %(limit)s
"""


_LINE = ("x.id AS id", "x.ts AS ts", "x.role AS role", "x.content AS content", "x.edited AS edited")
_HISTORY_SQL = _newest_of_lineage(*_LINE)
# The replies' reasoning is read only for a preset that sends it back (it can be long).
_HISTORY_REASONING_SQL = _newest_of_lineage(*_LINE, "x.reasoning AS reasoning")
# The speakers of a session's newest messages (``metadata.speaker``, which the runtime's
# group chats write on replies), a fork's ancestors' too, as the history reads them:
# tests/fastpaths/test_turn_reads.py pins it to ``_latest``.
_SPEAKERS_SQL = _newest_of_lineage(
    "x.id AS id",
    "x.role AS role",
    "x.content AS content",
    "x.metadata #>> '{speaker,id}' AS speaker_id",
    "x.metadata #>> '{speaker,name}' AS speaker_name",
)
_CHAT_COUNT_SQL = f"""
    SELECT COALESCE(SUM((
        SELECT count(*) FROM {Message._meta.db_table} x
        WHERE x.tenant_id = %(tenant)s AND x.session_id = s.sid AND x.ts <= s.upto
          AND x.role IN ('user', 'assistant')
    )), 0)::bigint FROM ({forks.SEGMENTS_SQL}) s
"""


def get_history_lines(
    tenant, session_id: str, limit: int = DEFAULT_HISTORY_LIMIT, *, reasoning: bool = False
) -> list[tuple]:
    """The same history as ``(id, ts, role, content, edited)`` tuples, for the chat turn's
    hot path: building fifty model instances per turn cost more than the query. With
    ``reasoning``, each tuple ends with the message's reasoning too."""
    params = {"tenant": tenant.pk, "session": session_id, "limit": max(int(limit), 0)}
    with prepared(_HISTORY_REASONING_SQL if reasoning else _HISTORY_SQL, params) as cursor:
        rows = cursor.fetchall()
    rows.reverse()
    return rows


def get_history_speakers(
    tenant_id, session_id: str, limit: int = DEFAULT_HISTORY_LIMIT
) -> list[tuple[object, str, str, str | None, str | None]]:
    """The history as ``(id, role, content, speaker id, speaker name)`` tuples, oldest
    first: who spoke each message, when its ``metadata.speaker`` says (a group chat's
    replies), as text."""
    params = {"tenant": tenant_id, "session": session_id, "limit": max(int(limit), 0)}
    with prepared(_SPEAKERS_SQL, params) as cursor:
        rows = cursor.fetchall()
    rows.reverse()
    return rows


def count_chat_messages(tenant, session_id: str) -> int:
    """How many user and assistant messages the session holds, archived ones included (and
    a fork's ancestors' up to the fork point): the position of the next message (what
    worldbook timed effects count in)."""
    with prepared(_CHAT_COUNT_SQL, {"tenant": tenant.pk, "session": session_id}) as cursor:
        return int(cursor.fetchone()[0])


def last_message(tenant, session_id: str) -> Message | None:
    """The session's newest unarchived message (what regenerate and continue work on)."""
    found = _latest(tenant, session_id, 1)
    return found[0] if found else None


def get_full_history(tenant, session_id: str, limit: int | None = None) -> list[Message]:
    """Every message including archived ones (for display), ascending."""
    rows = _latest(tenant, session_id, int(limit) if limit else 2**31 - 1, archived=True)
    return list(reversed(rows))


def message_texts(session_id: str, ids) -> dict[str, str]:
    """Message id → its text now, for those of ``ids`` still in conversation
    ``session_id`` or shared with it by the conversation it was branched from (what story
    reads through ``console.history``)."""
    wanted = [i for i in ids if is_uuid(i)]
    if not wanted:
        return {}
    fork = SessionFork.objects.filter(session_id=session_id).first()
    segments = [*(fork.ancestors if fork else []), (session_id, forks.MAX_TS)]
    rows = Message.objects.filter(forks.history_filter(segments), pk__in=wanted)
    if fork is not None:
        rows = rows.filter(tenant_id=fork.tenant_id)
    return {str(pk): text for pk, text in rows.values_list("pk", "content")}


def _kind_filters(qs, kinds=None, exclude_kinds=None):
    # Seed rule: a NULL kind is never excluded by exclude_kinds (the blacklist wins).
    if exclude_kinds:
        qs = qs.filter(Q(kind__isnull=True) | ~Q(kind__in=list(exclude_kinds)))
    if kinds:
        qs = qs.filter(kind__in=list(kinds))
    return qs


def get_messages_by_range(
    tenant, session_id: str, from_ts: int, to_ts: int, roles=None, exclude_kinds=None
) -> list[Message]:
    qs = Message.objects.filter(
        tenant=tenant, session_id=session_id, ts__gte=from_ts, ts__lte=to_ts
    )
    if roles:
        qs = qs.filter(role__in=list(roles))
    return list(_kind_filters(qs, exclude_kinds=exclude_kinds).order_by("ts"))


def get_recent_across_sessions(
    tenant,
    *,
    limit: int,
    since_ts: int | None = None,
    platform: str | None = None,
    exclude_session_ids=None,
    roles=None,
    kinds=None,
    exclude_kinds=None,
) -> list[tuple[str, Message]]:
    """Latest ``limit`` unarchived messages of all sessions, ascending, with their session."""
    limit = min(max(int(limit), 0), CROSS_SESSION_MAX_LIMIT)
    qs = Message.objects.filter(tenant=tenant, archived=False)
    qs = qs.filter(role__in=list(roles or ["user", "assistant"]))
    if since_ts is not None:
        qs = qs.filter(ts__gte=since_ts)
    if platform:
        qs = qs.filter(metadata__platform=platform)
    if exclude_session_ids:
        qs = qs.exclude(session_id__in=list(exclude_session_ids))
    qs = _kind_filters(qs, kinds, exclude_kinds)
    rows = list(qs.order_by("-ts")[:limit])
    return [(m.session_id, m) for m in reversed(rows)]


def get_metadata(tenant, namespace: str, key: str) -> dict | None:
    row = MemoryMetadata.objects.filter(tenant=tenant, namespace=namespace, key=key).first()
    return row.data if row else None


def list_metadata(tenant, namespace: str) -> list[dict]:
    rows = MemoryMetadata.objects.filter(tenant=tenant, namespace=namespace).order_by("key")
    return [{"key": r.key, "data": r.data} for r in rows]
