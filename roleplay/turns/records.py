"""A turn's rows: the player's message and the running turn at its start, the reply and the
turn's end at its finish, and the sweep of turns whose process died.

The database enforces the two turn rules: one running turn per conversation and one turn per
``client_message_id`` (see ``Turn``). A ``chat`` start is one transaction of two statements:
the message store's append (which carries the store's timestamp rule) and the turn's insert;
either rule broken shows as a unique violation, and only then is anything else read.

Every kind is admitted in the same transaction, after the turn's insert
(``roleplay.quotas.admission``): a turn its player's plan refuses stores nothing, and a turn
refused for a rule of its own is not counted.

The other kinds work on the conversation's last assistant message: ``regenerate`` (and
``edit_regenerate``) finish by adding an alternative to it, ``continue`` by extending it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

import psycopg
from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from memory import alternatives, forks
from memory import selectors as message_reads
from memory import services as message_store
from memory.models import MessageStatus
from roleplay.errors import NothingToRewrite, TurnInProgress
from roleplay.models import Conversation, Turn, TurnKind, TurnStatus
from roleplay.quotas.admission import UNLIMITED_ADMISSION, Admission, admit

from . import heartbeat

# What a database outage raises: Django's wrapped errors, and the pool's own (a timeout
# while it cannot connect).
STORAGE_ERRORS = (DatabaseError, psycopg.Error)

logger = logging.getLogger(__name__)

MAX_CONTENT_BYTES = 16 * 1024
LEASE = timedelta(seconds=settings.TURN_LEASE_SECONDS)

_MESSAGE_STATUS = {
    TurnStatus.COMPLETE: MessageStatus.COMPLETE,
    TurnStatus.FAILED: MessageStatus.FAILED,
    TurnStatus.CANCELLED: MessageStatus.CANCELLED,
}


@dataclass(frozen=True)
class TurnStart:
    """The turn a player's message started, or the earlier turn of the same client id."""

    turn: Turn
    duplicate: bool
    # What the player's plan lets the turn ask of the model (``roleplay.quotas``).
    admission: Admission = UNLIMITED_ADMISSION


def begin_turn(
    conversation: Conversation,
    client_message_id: str,
    content: str = "",
    *,
    kind: str = TurnKind.CHAT,
    speaker=None,
) -> TurnStart:
    """Start a turn of ``kind``, or return the turn of this client id. A ``chat`` turn
    stores the player's message; a ``group`` turn answers with a new reply and no message;
    the others work on the last assistant message. ``speaker``: the group member who
    speaks the reply (``roleplay.groups``). A turn
    still running raises ``TurnInProgress`` unless it was abandoned (its process stopped
    beating, or its lease ran out)."""
    try:
        return _insert_turn(conversation, client_message_id, content, kind, speaker)
    except TurnInProgress:
        if not expire_abandoned(conversation):
            raise
        return _insert_turn(conversation, client_message_id, content, kind, speaker)


def _insert_turn(
    conversation: Conversation, client_message_id: str, content: str, kind: str, speaker=None
) -> TurnStart:
    try:
        with transaction.atomic():
            if kind == TurnKind.CHAT:
                user_message_id = message_store.save_message(
                    conversation.tenant,
                    conversation.session_id,
                    role="user",
                    content=content,
                    kind="chat",
                    metadata={"client_message_id": client_message_id},
                ).id
                reply_id = uuid.uuid4()
            elif kind == TurnKind.GROUP:
                user_message_id, reply_id = None, uuid.uuid4()
            else:
                user_message_id, reply_id = _rewritten(conversation, kind)
            turn = Turn.objects.create(
                tenant=conversation.tenant,
                conversation=conversation,
                client_message_id=client_message_id,
                kind=kind,
                user_message_id=user_message_id,
                assistant_message_id=reply_id,
                lease_expires_at=timezone.now() + LEASE,
                owner=heartbeat.owner_id(),
                speaker=speaker,
            )
            return TurnStart(turn, duplicate=False, admission=admit(conversation))
    except IntegrityError as exc:
        again = Turn.objects.filter(
            conversation=conversation, client_message_id=client_message_id
        ).first()
        if again is not None:
            return TurnStart(again, duplicate=True)
        raise TurnInProgress(
            "turn_in_progress", "a reply is still being generated in this conversation"
        ) from exc


def _rewritten(conversation: Conversation, kind: str):
    """(user message id, reply id) of a turn that works on the last message: a regenerate or
    continue rewrites the last reply; an ``edit_regenerate`` after an edited player message
    that has no reply yet answers it with a new reply."""
    last = message_reads.last_message(conversation.tenant, conversation.session_id)
    if last is not None:  # a reply a branch shares (or its branch's own parent's) is frozen
        forks.refuse_shared(conversation.tenant, last.session_id, last.ts)
    if last is not None and last.role == "assistant":
        return None, last.id
    if last is not None and last.role == "user" and kind == TurnKind.EDIT_REGENERATE:
        return last.id, uuid.uuid4()
    raise NothingToRewrite(
        "nothing_to_rewrite",
        f"{kind} needs a reply to work on: the conversation's last message is not one",
    )


def answers_new_message(turn: Turn) -> bool:
    """Whether the turn's reply is a new message (rather than a rewrite of a stored one)."""
    return turn.kind in (TurnKind.CHAT, TurnKind.GROUP) or (
        turn.kind == TurnKind.EDIT_REGENERATE and turn.user_message_id is not None
    )


def finish_turn(
    turn: Turn,
    *,
    content: str,
    status: str,
    usage=None,
    error_code=None,
    trace=None,
    config=None,
    also: Sequence[Callable[[], None]] = (),
    metadata: dict | None = None,
    reasoning: str = "",
) -> bool:
    """Commit the reply (partial text kept on failure) and close the turn: a new message for
    ``chat``, a new alternative for a regenerate, more text for a continue; ``also`` the
    records that go with it (the plug-ins' ``beside`` hooks, the Actor's ``ModelCall`` rows), in
    the same transaction; ``metadata`` what plug-ins keep beside a new message's or
    alternative's text, ``reasoning`` the model's scratchpad kept beside it (the
    alternative's own for a regenerate). False, and nothing written, when the turn was
    closed already: a sweep found its process silent (``expire_abandoned``) and kept its
    flushed text instead.

    The records are written plainly after the reply; should one fail, the whole transaction
    is done again with each record in a savepoint of its own (the failure logged, the reply
    and the other records kept), so the usual turn pays no savepoint round trips."""
    close = partial(
        _close, turn, content, reasoning, status, usage, error_code, trace, config, metadata
    )
    if also:
        try:
            return close(lambda: _write_plainly(also))
        except _RecordFailed:
            logger.info("a record of turn %s failed; writing them one by one", turn.id)
    return close(lambda: _write_with_reply(turn, also))


class _RecordFailed(Exception):
    """A record written with the reply failed: the transaction is done again without it."""


def _write_plainly(work: Sequence[Callable[[], None]]) -> None:
    for write in work:
        try:
            write()
        except Exception as exc:
            raise _RecordFailed from exc


def _close(
    turn, content, reasoning, status, usage, error_code, trace, config, extra, records
) -> bool:
    metadata = {
        "turn_id": str(turn.id),
        **(extra or {}),
        **({"error": error_code} if error_code else {}),
    }
    with transaction.atomic():
        closed = Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING).update(
            status=status,
            model_config=config,
            usage=usage or {},
            error_code=error_code,
            trace=trace or {},
            finished_at=timezone.now(),
            partial_reply="",  # the reply is stored now
        )
        if not closed:
            logger.warning("turn %s was closed as abandoned before its end", turn.id)
            return False
        if answers_new_message(turn):
            if content or status == TurnStatus.COMPLETE:
                message_store.save_message(
                    turn.tenant,
                    str(turn.conversation_id),
                    role="assistant",
                    content=content,
                    kind="chat",
                    status=_MESSAGE_STATUS[status],
                    metadata=metadata,
                    message_id=turn.assistant_message_id,
                    reasoning=reasoning,
                )
        elif turn.kind in (TurnKind.REGENERATE, TurnKind.EDIT_REGENERATE):
            if content:
                alternatives.add_alternative(
                    turn.tenant,
                    turn.assistant_message_id,
                    content=content,
                    status=_MESSAGE_STATUS[status],
                    metadata=metadata,
                    reasoning=reasoning,
                )
        elif content:  # a continue
            alternatives.extend_message(
                turn.tenant, turn.assistant_message_id, content, status=MessageStatus.COMPLETE,
                reasoning=reasoning,
            )  # fmt: skip
        index_for_recall(turn)
        records()
    return True


def _write_with_reply(turn: Turn, work: Sequence[Callable[[], None]]) -> None:
    """Each record in a savepoint of its own: a failure is logged, and the reply stands."""
    for write in work:
        try:
            with transaction.atomic():
                write()
        except Exception:
            logger.exception("a record written with the reply of turn %s failed", turn.id)


def index_for_recall(turn: Turn) -> None:
    """Once the turn's messages commit, index them for recall (``memory.recall``), with the
    conversation's owner: the player's recall finds them within moments."""
    ids = [str(i) for i in (turn.user_message_id, turn.assistant_message_id) if i is not None]
    owner = None
    if Turn.conversation.is_cached(turn):  # the turn's own read has it: no query
        conversation = turn.conversation
        owner = (conversation.tenant_id, conversation.player_id, conversation.character_id)
    index_on_commit(turn.conversation_id, ids, owner=owner)


def index_on_commit(conversation_id, message_ids: list[str], *, owner=None) -> None:
    """Send ``memory.index_messages`` for the conversation's ``message_ids`` once the
    current transaction commits (a broker that is down costs recall the messages, never the
    write). ``owner`` is the conversation's (tenant, player, character) when the caller
    has it; else it is read."""
    if owner is None:
        owner = (
            Conversation.objects.filter(pk=conversation_id)
            .values_list("tenant_id", "player_id", "character_id")
            .first()
        )
    if owner is None or not message_ids:
        return
    tenant_id, player_id, character_id = owner
    session_id = str(conversation_id)  # Conversation.session_id

    def send() -> None:
        from console import task_send
        from memory.recall import pending
        from memory.tasks import index_messages

        job = [str(tenant_id), session_id, str(player_id), str(character_id),
               str(conversation_id), [str(i) for i in message_ids]]  # fmt: skip
        try:  # the job waits first: its own task may take it with others' (or find it done)
            task_send.send(index_messages, *job, before=lambda redis: pending.add(job, redis))
        except Exception:  # the broker is down: the write stands; recall misses it
            logger.warning("could not queue the recall indexing of %s", session_id)

    transaction.on_commit(send)


def live_turns():
    """Running turns whose lease has not run out: a reply is being generated. A running
    turn with an expired lease was abandoned by a dead process and blocks nothing."""
    live = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__gte=timezone.now())
    return Turn.objects.filter(status=TurnStatus.RUNNING).filter(live)


def expire_abandoned(conversation: Conversation | None = None) -> int:
    """Fail running turns whose process died, of one conversation or of all (the periodic
    sweep, ``roleplay.tasks.expire_abandoned_turns``): their owner stopped beating
    (``heartbeat``) or, for a turn without one or while Redis cannot answer, their lease ran
    out. The text streamed before the death stays as a ``failed`` reply."""
    running = Turn.objects.filter(status=TurnStatus.RUNNING)
    if conversation is not None:
        running = running.filter(conversation=conversation)
    expired = set(running.filter(lease_expires_at__lt=timezone.now()).values_list("pk", flat=True))
    owned = dict(running.exclude(owner="").values_list("pk", "owner"))
    try:
        gone = heartbeat.dead(set(owned.values()))
    except Exception:  # Redis cannot answer: the leases alone decide
        logger.warning("cannot read the turns' heartbeats; waiting for their leases")
        gone = set()
    expired |= {pk for pk, owner in owned.items() if owner in gone}
    return sum(_abandon(pk) for pk in expired)


def _abandon(turn_id) -> int:
    """Close one abandoned turn as ``failed: turn_abandoned``, keeping its flushed text; 0
    when another sweep (or its own process, late) closed it first."""
    with transaction.atomic():
        turn = (
            Turn.objects.select_for_update(skip_locked=True)
            .select_related("tenant")
            .filter(pk=turn_id, status=TurnStatus.RUNNING)
            .first()
        )
        if turn is None:
            return 0
        finish_turn(
            turn,
            content=turn.partial_reply,
            status=TurnStatus.FAILED,
            error_code="turn_abandoned",
            trace={**turn.trace, "error": "turn_abandoned"},
        )
        return 1
