"""Background consolidation (seed 004): the player's own messages of a conversation become
memory ``candidate`` entries with evidence, in batches, written by the conversation's model
(purpose ``memory_consolidate``) in the background. The checks are pure
(``memory.engine.consolidation``); this module owns the cursor, the runs and the writes.

- **When.** Off by default (the memory settings' ``consolidation.enabled``). After a turn's
  messages are indexed (:func:`on_indexed`) the conversation gets a cursor at its newest
  message of the player; once ``early_messages`` (8) wait, a run is sent at once. The
  minute's sweep (:func:`sweep`) sends one for every conversation whose messages have waited
  ``interval_minutes`` (5). ``POST …/memory/consolidate`` asks for one now.
- **One at a time.** A run is claimed under a transaction-scoped advisory lock: at most
  ``MEMORY_CONSOLIDATION_CONCURRENCY`` (1, as the seed) run at once in the deployment, and
  at most one per owner (a partial unique constraint, so two racing workers cannot both
  hold one). A run left ``running`` for :data:`ABANDONED_AFTER` is closed ``failed``.
- **Only the player's words.** Sources are stored ``user`` messages of the conversation,
  never assistant text, and never the recalled or injected memory a turn carries (that is
  placed in the request, never stored in the transcript), so memory cannot feed itself.
- **Cursor.** A commit moves the cursor past its own batch only (compare-and-set on the
  position the run started at); newer messages wait for the next batch. A model failure
  keeps the batch. A refused batch is kept for :data:`MAX_BATCH_ATTEMPTS` tries, then
  dropped. A person's change meanwhile (an edited, deleted or cleared entry: the owner's
  epoch) or consolidation switched off makes the result ``stale``: nothing is written and
  the batch is dropped, so what was forgotten is not learned back. Switched on again
  (:func:`on_switched_on`), it starts from the messages sent after that moment: what was
  said while it was off is never taken.
- **Repeats.** A candidate equal (content hash) or near-equal (cosine ≥
  ``dedupe_similarity``) to an active or candidate entry of the owner adds its evidence to
  that entry instead of a new row.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from console import task_send
from console.db import run_db
from console.embedding.protocol import cosine
from console.scoping import is_uuid
from memory import owners
from memory.configs.selectors import config_for
from memory.engine import consolidation as engine
from memory.engine.config import consolidating
from memory.engine.entries import content_hash
from memory.engine.scrub import scrub
from memory.entries import evidence
from memory.entries.services import add_entry, clean_content
from memory.errors import MemoryModelError
from memory.models import (
    ConsolidationCursor,
    ConsolidationRun,
    EntryOrigin,
    EntryStatus,
    MemoryEntry,
    MemoryEvidence,
    Message,
)
from memory.recall.embedder import EmbeddingUnavailable, recall_embedder
from memory.recall.search import entry_vectors
from memory.signals import consolidation_switched_on, memory_clear, messages_indexed
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway, resolve_config
from roleplay.llm.types import ModelRequest
from roleplay.models import Conversation
from roleplay.players.selectors import persona_for

logger = logging.getLogger(__name__)

RUNNING, DONE, REJECTED, STALE, FAILED = "running", "done", "rejected", "stale", "failed"
MAX_BATCH_ATTEMPTS = 3
ABANDONED_AFTER = timedelta(minutes=10)
LOCK_KEY = 0x6D656D63  # pg_advisory_xact_lock key of the claim
NEAR_POOL = 200  # entries of the owner compared for near-equal text


def settings_for(tenant, character_id: str) -> engine.Settings | None:
    """The consolidation settings in force, or None when it is off (or memory is)."""
    config = config_for(tenant, character_id)
    return engine.settings_of(config.consolidation) if consolidating(config) else None


def concurrency() -> int:
    return max(1, int(getattr(settings, "MEMORY_CONSOLIDATION_CONCURRENCY", 1)))


def _user_messages(tenant, session_id: str):
    return Message.objects.filter(
        tenant=tenant, session_id=session_id, role="user", status="complete"
    ).exclude(content="")


def ensure_cursor(conversation, *, backlog: int = 1, since=()) -> ConsolidationCursor:
    """The conversation's cursor; a new one starts before the first of the messages
    ``since`` (a turn's), else before the player's newest ``backlog`` messages."""
    found = ConsolidationCursor.objects.filter(
        tenant=conversation.tenant, session_id=conversation.session_id
    ).first()
    if found is not None:
        return found
    mine = _user_messages(conversation.tenant, conversation.session_id)
    first = mine.filter(pk__in=since).order_by("ts").values_list("ts", flat=True).first()
    newest = [first] if first is not None else []
    if not newest:
        newest = list(mine.order_by("-ts").values_list("ts", flat=True)[:backlog])
    start = newest[-1] - 1 if newest else 0
    try:
        with transaction.atomic():
            return ConsolidationCursor.objects.create(
                tenant=conversation.tenant,
                player=conversation.player,
                session_id=conversation.session_id,
                conversation_id=conversation.pk,
                character_id=str(conversation.character_id),
                through_ts=start,
            )
    except IntegrityError:  # another worker made it first
        return ConsolidationCursor.objects.get(
            tenant=conversation.tenant, session_id=conversation.session_id
        )


def pending(cursor: ConsolidationCursor, limit: int) -> list[engine.Source]:
    """The newest ``limit`` messages waiting after the cursor, oldest first."""
    rows = (
        _user_messages(cursor.tenant, cursor.session_id)
        .filter(ts__gt=cursor.through_ts)
        .order_by("-ts")
        .values_list("pk", "content", "ts")[:limit]
    )
    return [engine.source(str(pk), content, ts) for pk, content, ts in reversed(rows)]


def _send(conversation_id) -> None:
    task_send.named("roleplay.consolidate_memory").delay(str(conversation_id))


def on_indexed(
    sender, *, tenant, session_id, character_id, conversation_id, message_ids=(), **_
) -> None:
    """After a turn: the conversation's cursor, and a run at once when enough wait."""
    try:
        found = settings_for(tenant, str(character_id))
        if found is None:
            return
        conversation = Conversation.objects.select_related("tenant", "player").get(
            pk=conversation_id
        )
        cursor = ensure_cursor(conversation, since=message_ids)
        if len(pending(cursor, found.early_messages)) >= found.early_messages:
            _send(conversation_id)
    except Exception:
        logger.warning("could not schedule consolidation of %s", session_id, exc_info=True)


messages_indexed.connect(on_indexed, dispatch_uid="roleplay.consolidation")


def sweep(limit: int = 500) -> int:
    """Send a run for each conversation whose messages have waited its interval; how many."""
    waiting = Message.objects.filter(
        tenant=OuterRef("tenant"),
        session_id=OuterRef("session_id"),
        role="user",
        ts__gt=OuterRef("through_ts"),
    )
    cursors = (
        ConsolidationCursor.objects.filter(Exists(waiting))
        .select_related("tenant")
        .order_by("last_run_at")[:limit]
    )
    now, sent, known = timezone.now(), 0, {}
    for cursor in cursors:
        key = (cursor.tenant_id, cursor.character_id)
        if key not in known:
            known[key] = settings_for(cursor.tenant, cursor.character_id)
        found = known[key]
        since = cursor.last_run_at or cursor.created_at
        if found is not None and now - since >= timedelta(minutes=found.interval_minutes):
            _send(cursor.conversation_id)
            sent += 1
    return sent


def request_runs(tenant, player, conversations) -> list[str]:
    """``POST …/memory/consolidate``: a run now for each of ``conversations`` (the player's)
    with consolidation on and messages waiting; a new cursor takes the newest
    ``max_pending`` messages. The ids of the conversations sent."""
    sent = []
    for conversation in conversations:
        found = settings_for(tenant, str(conversation.character_id))
        if found is None:
            continue
        cursor = ensure_cursor(conversation, backlog=found.max_pending)
        if pending(cursor, 1):
            _send(conversation.pk)
            sent.append(str(conversation.pk))
    return sent


def run(conversation_id: str) -> str:
    """Consolidate the next batch of the conversation; the run's outcome, or ``skipped``,
    ``disabled``, ``busy`` (another run holds the owner or the deployment's cap) or
    ``empty``."""
    conversation = (
        Conversation.objects.select_related("tenant", "character", "player")
        .filter(pk=conversation_id)
        .first()
    )
    if conversation is None:
        return "skipped"
    tenant = conversation.tenant
    found = settings_for(tenant, str(conversation.character_id))
    if found is None:
        return "disabled"
    cursor = ensure_cursor(conversation)
    job = _claim(conversation, cursor)
    if job is None:
        return "busy"
    try:
        return _run(conversation, cursor, job, found)
    except Exception:  # the run must not hold the owner until it is reaped
        logger.exception("consolidation run %s failed", job.pk)
        return _close(job, cursor, FAILED, "internal_error", "")


def _run(conversation, cursor, job, found: engine.Settings) -> str:
    tenant = conversation.tenant
    batch = engine.pick_batch(pending(cursor, found.max_pending), found)
    if not batch:
        job.delete()
        return "empty"
    ConsolidationRun.objects.filter(pk=job.pk).update(message_ids=[s.id for s in batch])
    messages, response_format = engine.request(
        batch,
        user=persona_for(conversation).name,
        character=conversation.character.name,
        max_candidates=found.max_candidates,
    )
    model_config = resolve_config(
        tenant, conversation=conversation, character=conversation.character
    )
    gateway = Gateway(
        tenant, model_config, "memory_consolidate", run_db=run_db,
        player_id=conversation.player_id,
    )  # fmt: skip
    request = ModelRequest(
        messages,
        response_format=response_format,
        temperature=engine.TEMPERATURE,
        timeout=found.timeout_ms / 1000,
    )
    try:
        result = asyncio.run(gateway.complete(request))
        raw = engine.parse(result.content)
    except (ModelError, engine.Unparsable) as exc:
        code = exc.code if isinstance(exc, ModelError) else "unparsable_answer"
        return _close(job, cursor, FAILED, code, str(exc), calls=gateway.call_ids)
    try:
        outside = engine.cited_ids(raw) - {s.id for s in batch}
        candidates = engine.check(
            raw,
            batch,
            elsewhere=_elsewhere(conversation, outside),
            max_candidates=found.max_candidates,
        )
        return _commit(conversation, job, cursor, batch, candidates, found, gateway.call_ids)
    except engine.Rejected as exc:
        calls = gateway.call_ids
        return _close(job, cursor, REJECTED, exc.code, exc.detail, calls=calls, batch=batch)
    except MemoryModelError as exc:
        calls = gateway.call_ids
        return _close(job, cursor, REJECTED, exc.code, exc.message, calls=calls, batch=batch)


def _claim(conversation, cursor: ConsolidationCursor) -> ConsolidationRun | None:
    with transaction.atomic():
        with connection.cursor() as sql:
            sql.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])
        running = ConsolidationRun.objects.filter(status=RUNNING)
        running.filter(created_at__lt=timezone.now() - ABANDONED_AFTER).update(
            status=FAILED, error_code="abandoned", finished_at=timezone.now()
        )
        if running.count() >= concurrency():
            return None
        _revision, epoch = owners.state(conversation.tenant, conversation.player_id)
        try:
            with transaction.atomic():
                job = ConsolidationRun.objects.create(
                    tenant=conversation.tenant,
                    player=conversation.player,
                    session_id=conversation.session_id,
                    conversation_id=conversation.pk,
                    epoch=epoch,
                    from_ts=cursor.through_ts,
                )
        except IntegrityError:  # the owner's run is on
            return None
        ConsolidationCursor.objects.filter(pk=cursor.pk).update(last_run_at=timezone.now())
        return job


def _elsewhere(conversation, ids: set[str]) -> dict[str, str]:
    """Cited ids that are the player's messages in another conversation: with the same
    character ``cross_conversation``, else ``cross_persona``."""
    valid = [i for i in ids if is_uuid(i)]
    if not valid:
        return {}
    found = dict(
        Message.objects.filter(tenant=conversation.tenant, pk__in=valid)
        .exclude(session_id=conversation.session_id)
        .values_list("pk", "session_id")
    )
    sessions = {
        str(pk): character_id
        for pk, character_id in Conversation.objects.filter(
            tenant=conversation.tenant,
            player=conversation.player,
            id__in={s for s in found.values() if is_uuid(s)},
        ).values_list("id", "character_id")
    }
    out = {}
    for pk, session_id in found.items():
        if session_id in sessions:
            same = str(sessions[session_id]) == str(conversation.character_id)
            out[str(pk)] = "cross_conversation" if same else "cross_persona"
    return out


def _commit(conversation, job, cursor, batch, candidates, found, calls) -> str:
    tenant, player = conversation.tenant, conversation.player
    with transaction.atomic():
        owners.lock(player.pk)
        current = settings_for(tenant, str(conversation.character_id))
        if current is None or not owners.epoch_is(tenant, player.pk, job.epoch):
            return _close(job, cursor, STALE, "stale", "memory changed meanwhile", calls=calls,
                          consume=batch)  # fmt: skip
        if not _advance(job, cursor, batch):
            return _close(job, cursor, STALE, "cursor_moved", "", calls=calls)
        messages = {str(pk): m for pk, m in Message.objects.in_bulk([s.id for s in batch]).items()}
        added, merged = [], []
        for candidate in candidates:
            entry, repeat = _write(conversation, candidate, messages, found.dedupe_similarity)
            (merged if repeat else added).append(str(entry.pk))
        ConsolidationRun.objects.filter(pk=job.pk).update(
            status=DONE,
            entry_ids=list(dict.fromkeys(added + merged)),
            added=len(added),
            merged=len(merged),
            model_call_ids=list(calls),
            finished_at=timezone.now(),
        )
    return DONE


def _write(conversation, candidate: engine.Candidate, messages, similarity: float):
    """The candidate as a new ``candidate`` entry with its evidence, or its evidence added
    to the owner's equal or near-equal entry; (entry, whether it was a repeat)."""
    tenant, player = conversation.tenant, conversation.player
    text = clean_content(candidate.kind, candidate.content)
    entry = _repeat_of(tenant, player, candidate.kind, text, similarity)
    repeat = entry is not None
    if entry is None:
        entry = add_entry(
            tenant,
            player,
            kind=candidate.kind,
            scope=candidate.scope,
            content=text,
            character_id="" if candidate.scope == "shared" else str(conversation.character_id),
            session_id=conversation.session_id if candidate.scope == "session" else "",
            status=EntryStatus.CANDIDATE,
            origin=EntryOrigin.CONSOLIDATION,
        )
    else:
        owners.touch(tenant, player.pk)
    for span in candidate.spans:
        message = messages[span.message_id]
        held = MemoryEvidence.objects.filter(
            entry=entry, message=message, start=span.start, end=span.end
        )
        if not held.exists():
            evidence.attach(tenant, entry, message, span.start, span.end)
    if repeat and entry.source_missing:
        MemoryEntry.objects.filter(pk=entry.pk).update(source_missing=False)
    return entry, repeat


def _repeat_of(tenant, player, kind: str, text: str, similarity: float) -> MemoryEntry | None:
    live = MemoryEntry.objects.filter(
        tenant=tenant, player=player, status__in=(EntryStatus.ACTIVE, EntryStatus.CANDIDATE)
    )
    same = live.filter(content_hash=content_hash(text)).order_by("-status").first()
    if same is not None:
        return same
    pool = list(live.filter(kind=kind).order_by("-updated_at")[:NEAR_POOL])
    if not pool:
        return None
    try:
        vectors = entry_vectors([text] + [e.content for e in pool], recall_embedder(tenant))
    except EmbeddingUnavailable:  # the hash check above still caught exact repeats
        return None
    scored = [(cosine(vectors[0], vec), e) for vec, e in zip(vectors[1:], pool, strict=True)]
    best = max(scored, key=lambda pair: pair[0])
    return best[1] if best[0] >= similarity else None


def _advance(job, cursor, batch) -> bool:
    """Move the cursor past ``batch`` if it is still where the run started."""
    return bool(
        ConsolidationCursor.objects.filter(pk=cursor.pk, through_ts=job.from_ts).update(
            through_ts=batch[-1].ts, failures=0
        )
    )


def _close(job, cursor, status, code, detail, *, calls=(), batch=(), consume=None) -> str:
    """Close a run that wrote nothing. A refused ``batch`` counts a failure and is dropped
    after :data:`MAX_BATCH_ATTEMPTS`; ``consume`` drops the batch at once."""
    if consume is not None:
        _advance(job, cursor, consume)
    elif status in (REJECTED, FAILED):
        rows = ConsolidationCursor.objects.filter(pk=cursor.pk, through_ts=job.from_ts)
        rows.update(failures=cursor.failures + 1)
        if status == REJECTED and batch and cursor.failures + 1 >= MAX_BATCH_ATTEMPTS:
            _advance(job, cursor, batch)
    ConsolidationRun.objects.filter(pk=job.pk).update(
        status=status,
        error_code=code[:64],
        detail=scrub(detail[:2000]).text,  # may quote what the model said
        model_call_ids=list(calls),
        finished_at=timezone.now(),
    )
    if status in (REJECTED, FAILED):
        logger.info("consolidation run %s %s: %s", job.pk, status, code)
    return status


def on_clear(sender, *, tenant, scope, session_id=None, player=None, player_sessions=(), **_):
    """A clear drops what waits (seed 004): the cursors of the cleared conversations move
    past their messages, and the runs on them turn stale at commit (the epoch moved)."""
    cursors = ConsolidationCursor.objects.filter(tenant=tenant)
    if scope == "session":
        cursors = cursors.filter(session_id=session_id)
    elif scope == "player":
        cursors = cursors.filter(player=player)
    moved = _move_past_messages(cursors)
    return {"subsystem": "consolidation", "cursors_moved": moved} if moved else None


memory_clear.connect(on_clear, dispatch_uid="roleplay.consolidation.clear")


def on_switched_on(sender, *, tenant, character_ids, **_) -> None:
    """Consolidation came on for these characters (seed 004: while it was off, messages
    are not kept for it): their conversations' cursors move past what was said meanwhile,
    so it starts from the messages sent after that moment."""
    _move_past_messages(
        ConsolidationCursor.objects.filter(tenant=tenant, character_id__in=character_ids)
    )


consolidation_switched_on.connect(on_switched_on, dispatch_uid="roleplay.consolidation.on")


def _move_past_messages(cursors) -> int:
    """Move each of ``cursors`` past its conversation's newest message (one statement);
    how many moved. What waited is dropped; the cursor (no text) stays."""
    newest = Subquery(
        Message.objects.filter(tenant=OuterRef("tenant"), session_id=OuterRef("session_id"))
        .order_by("-ts")
        .values("ts")[:1]
    )
    return cursors.filter(through_ts__lt=newest).update(through_ts=newest, failures=0)
