"""Diaries (seed 000): after a reply, a conversation that has just reached a diary round
gets an ``episode`` entry summarising the rounds since the last one
(``memory.engine.diary``), written by the conversation's model in the background.

- :func:`on_indexed` (the receiver of ``memory.signals.messages_indexed``, in the worker
  after a turn's messages are indexed) counts the rounds and, when one is due, sends
  ``roleplay.write_diary``. Nothing of this runs on the turn's path.
- :func:`write` records the diary's run first (unique per conversation and round: a diary
  is written once however often it is triggered), calls the model with purpose
  ``memory_diary``, and in one transaction adds the active episode (scope ``session``,
  origin ``diary``) with evidence on the first and last message of its rounds and closes
  the run. A model failure closes the run ``failed`` with its code; the task tries again
  after a backoff (:func:`retry_after`), at most :data:`MAX_ATTEMPTS` times in all.
- A diary covers the rounds since the one before, and the rounds of the failed diaries just
  before it (``diary.first_round``), so a diary that finally failed leaves its rounds to
  the next one; a failed diary whose rounds a later one has taken is not tried again.
"""

from __future__ import annotations

import asyncio
import logging

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from console import task_send
from console.db import run_db
from memory.configs.selectors import config_for
from memory.engine import diary
from memory.engine.entries import max_chars
from memory.entries import evidence
from memory.entries.services import add_entry
from memory.models import DiaryRun, EntryOrigin, Message
from memory.signals import messages_indexed
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway, resolve_config
from roleplay.llm.types import ModelRequest
from roleplay.models import Conversation
from roleplay.players.selectors import persona_for

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = diary.MAX_ATTEMPTS
NOT_RETRIED = frozenset({"no_messages"})  # trying again would find the same
SKIPPED, RUNNING, DONE, FAILED = "skipped", "running", "done", "failed"


def rounds_of(tenant, session_id: str) -> int:
    """How many rounds (messages of the player) the conversation holds."""
    return Message.objects.filter(tenant=tenant, session_id=session_id, role="user").count()


def due_round(tenant, session_id: str, character_id: str) -> int | None:
    """The round a diary of the conversation is due at now (its diaries on, its round a
    diary round, none written or being written for it), else None."""
    config = config_for(tenant, character_id)
    if not (config.enabled and config.diaries):
        return None
    rounds = rounds_of(tenant, session_id)
    if not diary.due(rounds, config.diary_first_round, config.diary_every_rounds):
        return None
    taken = DiaryRun.objects.filter(
        tenant=tenant, session_id=session_id, through_round=rounds, status__in=(RUNNING, DONE)
    )
    return None if taken.exists() else rounds


def on_indexed(sender, *, tenant, session_id, character_id, conversation_id, **_) -> None:
    """Send the diary task when one is due; a failure here never fails the indexing."""
    try:
        rounds = due_round(tenant, session_id, str(character_id))
        if rounds is not None:
            task_send.named("roleplay.write_diary").delay(str(conversation_id), rounds)
    except Exception:
        logger.warning("could not schedule the diary of %s", session_id, exc_info=True)


messages_indexed.connect(on_indexed, dispatch_uid="roleplay.diaries")


def write(conversation_id: str, through: int) -> str:
    """Write the conversation's diary for the rounds up to ``through``; its run's outcome,
    or ``skipped`` when another run has it or it is done."""
    conversation = (
        Conversation.objects.select_related("tenant", "character", "player")
        .filter(pk=conversation_id)
        .first()
    )
    if conversation is None:
        return SKIPPED
    tenant, session_id = conversation.tenant, conversation.session_id
    run = _claim(conversation, through)
    if run is None:
        return SKIPPED
    config = config_for(tenant, str(conversation.character_id))
    failed = DiaryRun.objects.filter(
        tenant=tenant, session_id=session_id, status=FAILED, through_round__lt=through
    ).values_list("through_round", flat=True)
    first = diary.first_round(
        through, set(failed), config.diary_first_round, config.diary_every_rounds
    )
    lines = _round_lines(tenant, session_id, range(first, through + 1))
    if not lines:
        return _close(run, FAILED, error_code="no_messages")
    messages = diary.request(
        [(role, text) for _pk, role, text in lines],
        user=persona_for(conversation).name,
        character=conversation.character.name,
    )
    model_config = resolve_config(
        tenant, conversation=conversation, character=conversation.character
    )
    gateway = Gateway(
        tenant, model_config, "memory_diary", run_db=run_db, player_id=conversation.player_id
    )
    try:
        result = asyncio.run(
            gateway.complete(ModelRequest(messages, temperature=diary.TEMPERATURE))
        )
    except ModelError as exc:
        return _close(run, FAILED, error_code=exc.code)
    text = diary.entry_text(result.content, max_chars("episode"))
    if not text:
        return _close(run, FAILED, error_code="empty_diary")
    with transaction.atomic():
        entry = add_entry(
            tenant,
            conversation.player,
            kind="episode",
            scope="session",
            content=text,
            character_id=str(conversation.character_id),
            session_id=session_id,
            origin=EntryOrigin.DIARY,
        )
        for message_id, _role, content in (lines[0], lines[-1]) if len(lines) > 1 else lines:
            message = Message.objects.get(pk=message_id)
            evidence.attach(tenant, entry, message, 0, len(content))
        return _close(run, DONE, entry=entry)


def _claim(conversation, through: int) -> DiaryRun | None:
    """The diary's run, new or a failed one taken over; None if another has it, it is done,
    it failed too often, or a later diary has taken its rounds."""
    fields = {
        "tenant": conversation.tenant,
        "session_id": conversation.session_id,
        "through_round": through,
    }
    try:
        with transaction.atomic():
            return DiaryRun.objects.create(player=conversation.player, **fields)
    except IntegrityError:
        pass
    later = DiaryRun.objects.filter(
        tenant=conversation.tenant,
        session_id=conversation.session_id,
        through_round__gt=through,
        status__in=(RUNNING, DONE),
    )
    if later.exists():  # a later diary took these rounds
        return None
    taken = DiaryRun.objects.filter(**fields, status=FAILED, attempts__lt=MAX_ATTEMPTS).update(
        status=RUNNING, attempts=F("attempts") + 1, error_code=""
    )
    return DiaryRun.objects.get(**fields) if taken else None


def retry_after(conversation_id: str, through: int) -> float | None:
    """Seconds before the diary of ``through`` is tried again (it failed, with tries left,
    for a reason another try may not meet), else None."""
    conversation = Conversation.objects.filter(pk=conversation_id).first()
    if conversation is None:
        return None
    run = DiaryRun.objects.filter(
        tenant_id=conversation.tenant_id,
        session_id=conversation.session_id,
        through_round=through,
        status=FAILED,
    ).first()
    if run is None or run.error_code in NOT_RETRIED:
        return None
    return diary.retry_delay(run.attempts)


def _round_lines(tenant, session_id: str, rounds: range) -> list[tuple]:
    """``(id, role, text)`` of the messages of ``rounds`` (a round: a message of the player
    and the replies to it), in order."""
    out, current = [], 0
    rows = (
        Message.objects.filter(tenant=tenant, session_id=session_id, role__in=("user", "assistant"))
        .order_by("ts")
        .values_list("pk", "role", "content")
    )
    for pk, role, content in rows.iterator():
        if role == "user":
            current += 1
        if current > rounds.stop - 1:
            break
        if current >= rounds.start and content.strip():
            out.append((pk, role, content))
    return out


def _close(run: DiaryRun, status: str, *, entry=None, error_code: str = "") -> str:
    DiaryRun.objects.filter(pk=run.pk).update(
        status=status, entry=entry, error_code=error_code, finished_at=timezone.now()
    )
    if status == FAILED:
        logger.warning("diary %s failed: %s", run.pk, error_code)
    return status
