"""Generating a turn's reply: stream it to every socket on the conversation, store it, and
end the turn in the database whatever happens (a model failure, a cancel, a database
outage), telling the player with an ``error`` event when it did not complete.

Generation runs as an asyncio task in the process that accepted the message; its events go
out through ``hub.TurnFanout`` so every socket on the conversation, in this process or
another, sees the same stream, and a cancel sent from any socket on any process reaches the
task (``cancels``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial

from django.utils import timezone

from console.db import run_db
from console.logging import turn_id_var
from memory.models import Message
from memory.services import capped_reasoning
from roleplay.conversations.services import titles as conversation_titles
from roleplay.llm.errors import ModelCancelled, ModelError
from roleplay.models import Turn, TurnStatus
from roleplay.prompting.assembly import ContextOverflow
from roleplay.regex_scripts.turns import reply_display, stored_text, turn_scripts
from roleplay.turns import cancels, hub
from roleplay.turns.hub import TurnFanout
from roleplay.turns.priority import STARTS

from . import phases, streamed_text
from .context import TurnContext, load_context
from .plugin import PLUGINS, PluginFailed
from .records import LEASE, STORAGE_ERRORS, answers_new_message, finish_turn
from .reply import Reply

logger = logging.getLogger(__name__)

# turn id -> (conversation id, cancel event), for turns generating in this process.
RUNNING: dict[str, tuple[str, asyncio.Event]] = {}
_TASKS: set[asyncio.Task] = set()

Emit = Callable[[dict], Awaitable[None]]


async def run_turn(
    turn: Turn, emit: Emit, cancel: asyncio.Event, preloaded: TurnContext | Exception | None = None
) -> None:
    """Generate and stream the reply of ``turn``; always ends the turn in the database.

    load → pre-Actor phases → Actor stream → finish (committed) → committed phases →
    ``turn.completed`` → post-turn phases (``phases``). The plug-ins' records that go with
    the reply (their ``beside`` hooks) are written in the transaction that closes the turn,
    but only once the Actor was asked: a turn that fails before it has none (no background
    run, seed 002)."""
    token = turn_id_var.set(str(turn.id))
    started = time.perf_counter()
    parts: list[str] = []
    trace: dict = {}
    with_reply: list[Callable[[], None]] = []
    reply: Reply | None = None
    try:
        ctx = preloaded if preloaded is not None else await run_db(load_context, turn)
        if isinstance(ctx, Exception):
            raise ctx
        trace = ctx.trace
        await phases.run_stage("pre_actor", ctx, emit, cancel, partial(_renew_lease, turn))
        reply = Reply(
            ctx, emit, cancel, parts, partial(_beside, ctx, with_reply),
            partial(_renew_lease, turn), with_reply,
        )  # fmt: skip
        async with streamed_text.kept(turn, parts):  # kept if this process dies mid-stream
            await _generate(ctx, reply)
        usage, result = reply.usage(), reply.result
        finish_reason = result.finish_reason if result else None  # "length": cut short
        trace["model"] = {
            "model": result.model if result else None,
            "attempts": _attempts(result),
            "finish_reason": finish_reason,
        }
        trace["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
        # the reply as stored, after the AI-output scripts (``regex_scripts``)
        content = stored_text(turn_scripts(ctx), "".join(parts), "assistant")
        closed = await run_db(
            finish_turn,
            turn,
            content=content,
            status=TurnStatus.COMPLETE,
            usage=usage,
            trace=trace,
            config=ctx.config,
            also=with_reply,
            metadata=ctx.message_metadata,
            reasoning=reply.reasoning,
        )
        if not closed:  # the sweep took this turn for dead and kept its streamed text
            await _tell_abandoned(turn, emit)
            return
        ctx.reply = (ctx.continuing or "") + content
        await _completed(ctx, emit, usage, finish_reason, reply.reasoning)
    except (ModelCancelled, asyncio.CancelledError) as exc:
        await _fail(turn, parts, trace, TurnStatus.CANCELLED, "turn_cancelled", "cancelled", emit,
                    with_reply, _reasoning(reply))  # fmt: skip
        if isinstance(exc, asyncio.CancelledError):
            raise
    except (ContextOverflow, PluginFailed, ModelError) as exc:
        await _fail(turn, parts, trace, TurnStatus.FAILED, exc.code, str(exc), emit, with_reply,
                    _reasoning(reply))  # fmt: skip
    except STORAGE_ERRORS:
        logger.warning("turn failed: the database is unavailable", exc_info=True)
        message = "the conversation could not be saved; try again in a moment"
        await _fail(turn, parts, trace, TurnStatus.FAILED, "storage_unavailable", message, emit,
                    with_reply, _reasoning(reply))  # fmt: skip
    except Exception:
        logger.exception("turn failed")
        await _fail(turn, parts, trace, TurnStatus.FAILED, "internal_error", "turn failed", emit,
                    with_reply, _reasoning(reply))  # fmt: skip
    else:
        await _after_commit(ctx, emit)
    finally:
        turn_id_var.reset(token)


async def _completed(
    ctx: TurnContext, emit: Emit, usage: dict, finish_reason, reasoning: str
) -> None:
    """The reply is committed: the phases ``turn.completed`` waits for, the title of a
    first exchange, then ``turn.completed`` itself, with the turn's reasoning (the page
    shows it once the reply completes)."""
    turn = ctx.turn
    await _committed(ctx, emit)
    title = await _give_title(ctx)
    shown = reply_display(turn_scripts(ctx), ctx.reply or "")  # the display-only scripts'
    await emit(
        {
            "type": "turn.completed",
            "turn_id": str(turn.id),
            "kind": turn.kind,
            "assistant_message_id": str(turn.assistant_message_id),
            "usage": usage,
            "content": ctx.reply,
            "finish_reason": finish_reason,
            "reasoning": capped_reasoning(reasoning),
            **({"title": title} if title else {}),
            **({"display": shown} if shown is not None else {}),
        }
    )


async def _generate(ctx: TurnContext, reply: Reply) -> None:
    """The reply: a plug-in that drives the turn (its ``generate`` hook, the front tool
    loop) streams it in segments; otherwise one Actor call (direct generation)."""
    for generate in PLUGINS.generators:
        if await generate(ctx, reply):
            return
    await reply.segment()


def _beside(ctx: TurnContext, writes: list[Callable[[], None]]) -> None:
    """The plug-ins' records to write with the reply, once the Actor is asked."""
    for beside in PLUGINS.besides:
        write = beside(ctx)
        if write is not None:
            writes.append(write)


async def _give_title(ctx: TurnContext) -> str | None:
    """Title an untitled conversation from its first exchange, once the reply is committed
    (``services.conversation_titles``, no model call); the title rides on ``turn.completed``
    so no event is added. A failure costs the title, never the reply."""
    if not ctx.record or ctx.conversation.title:
        return None
    try:
        return await run_db(conversation_titles.give_title, ctx.conversation)
    except Exception:
        logger.warning("could not title conversation %s", ctx.conversation.pk, exc_info=True)
        return None


async def _committed(ctx: TurnContext, emit: Emit) -> None:
    """The phases ``turn.completed`` waits for, once the reply is stored (seed 000: the
    external memory's commit). They cannot change or lose the reply: a failure is logged,
    and their records are added to the stored trace."""
    before = len(ctx.trace.get("phases", []))
    try:
        await phases.run_stage("committed", ctx, emit, asyncio.Event())
    except Exception:
        logger.exception("committed phases failed")
    if len(ctx.trace.get("phases", [])) > before:
        try:
            await run_db(Turn.objects.filter(pk=ctx.turn.pk).update, trace=ctx.trace)
        except STORAGE_ERRORS:
            logger.warning("could not record the committed phases of turn %s", ctx.turn.id)


async def _after_commit(ctx: TurnContext, emit: Emit) -> None:
    """The plug-ins' deferred writes (``after_reply``), post-turn phases, then their records
    added to the committed turn's trace. Nothing here
    can change or lose the reply; a failure is logged. A turn that rewrote an earlier reply
    (regenerate, continue) also announces that message's new state as ``message.updated``,
    the event an edit sends, so every page shows its alternatives and text alike."""
    if not answers_new_message(ctx.turn):
        try:
            event = await run_db(_rewritten_message, ctx.turn)
            await hub.announce(ctx.turn.conversation_id, event)
        except STORAGE_ERRORS:
            logger.warning("could not announce the rewritten message of turn %s", ctx.turn.id)
    for deferred in [d for d in (hook(ctx) for hook in PLUGINS.after_replies) if d is not None]:
        try:
            await run_db(deferred)
        except Exception:
            logger.exception("a deferred write of turn %s failed", ctx.turn.id)
    stage_cancel = asyncio.Event()  # the player's cancel no longer applies once committed
    before = len(ctx.trace.get("phases", []))
    try:
        await phases.run_stage("post_turn", ctx, emit, stage_cancel)
    except Exception:
        logger.exception("post-turn phases failed")
    added = ctx.trace.get("phases", [])[before:]
    if added:
        try:
            await run_db(Turn.objects.filter(pk=ctx.turn.pk).update, trace=ctx.trace)
        except STORAGE_ERRORS:
            logger.warning("could not record the post-turn phases of turn %s", ctx.turn.id)


def _rewritten_message(turn: Turn) -> dict:
    return hub.message_updated(Message.objects.get(pk=turn.assistant_message_id))


CLOSE_RETRY_S = 1.0
CLOSE_RETRY_FOR_S = LEASE.total_seconds() * 4


def _reasoning(reply: Reply | None) -> str:
    return reply.reasoning if reply is not None else ""


async def _fail(
    turn, parts, trace, status, code, message, emit, with_reply=(), reasoning: str = ""
) -> None:
    """Store the partial reply, with the reasoning given so far, and close the turn (with
    ``with_reply``, the hooks' records of a turn that entered the Actor), then tell the
    player. If the database is down, the player is told at once and the turn is closed once
    it is back."""
    trace = {**trace, "error": code}
    close = partial(
        finish_turn, turn, content="".join(parts), status=status, error_code=code, trace=trace,
        also=list(with_reply), reasoning=reasoning,
    )  # fmt: skip
    try:
        await run_db(close)
    except STORAGE_ERRORS:
        logger.warning("cannot close turn %s now; retrying in the background", turn.id)
        _keep(asyncio.get_running_loop().create_task(_close_when_possible(close)))
    await emit(
        {
            "type": "error",
            "code": code,
            "message": message,
            "turn_id": str(turn.id),
            "assistant_message_id": str(turn.assistant_message_id),
        }
    )


async def _tell_abandoned(turn: Turn, emit: Emit) -> None:
    await emit(
        {
            "type": "error",
            "code": "turn_abandoned",
            "message": "this reply was stopped while the server was unreachable; its text so far"
            " is kept",
            "turn_id": str(turn.id),
            "assistant_message_id": str(turn.assistant_message_id),
        }
    )


async def _renew_lease(turn: Turn) -> None:
    """Keep the turn ours; a database hiccup here must not stop a reply that streams."""
    try:
        await run_db(
            Turn.objects.filter(pk=turn.pk).update, lease_expires_at=timezone.now() + LEASE
        )
    except STORAGE_ERRORS:
        logger.warning("could not renew the lease of turn %s", turn.id)


async def _close_when_possible(close) -> None:
    """Retry closing a turn until the database answers again (or the lease sweep will)."""
    deadline = time.monotonic() + CLOSE_RETRY_FOR_S
    while time.monotonic() < deadline:
        await asyncio.sleep(CLOSE_RETRY_S)
        try:
            await run_db(close)
            return
        except STORAGE_ERRORS:
            continue
    logger.error("gave up closing a turn; the abandoned-turn sweep will fail it")


async def settle(timeout: float = 30.0) -> None:
    """Wait until this loop's turns, with their post-turn phases, have ended: a socket that
    closes does not stop its turn, whose last writes may still be running."""
    loop = asyncio.get_running_loop()
    mine = [task for task in _TASKS if task.get_loop() is loop]
    if mine:
        await asyncio.wait(mine, timeout=timeout)


def _keep(task: asyncio.Task) -> None:
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


def _attempts(result) -> int:
    return getattr(result, "attempts", 1) if result else 0


def _warnings(preloaded) -> list[dict]:
    """The warnings the ``admit`` hooks gave the turn (``turns.plugin``)."""
    trace = getattr(preloaded, "trace", None)
    return list(trace.get("warnings", ())) if isinstance(trace, dict) else []


def launch(
    turn: Turn, started: dict, preloaded: TurnContext | Exception | None = None
) -> asyncio.Task:
    """Start generation as a task that outlives the socket that asked for it; ``started``
    (the ``turn.started`` event) goes out first. The caller has called ``STARTS.begin()``
    for the turn; the task calls ``end()`` once the turn is visibly under way."""
    cancel = asyncio.Event()
    RUNNING[str(turn.id)] = (str(turn.conversation_id), cancel)
    fanout = TurnFanout(turn.conversation_id)
    starting = True  # the caller counted this turn in STARTS; its first delta ends that

    async def emit(event: dict) -> None:
        nonlocal starting
        await fanout.send(event)
        if starting and event["type"] != "turn.started":
            starting = False
            STARTS.end()
        elif event["type"] == "delta":
            await STARTS.yield_to_starts()  # before reading the next chunk

    async def _run():
        try:
            try:
                await cancels.listen(request_cancel)
            except Exception:  # the turn still runs; only other processes' cancels miss it
                logger.warning("cancels from other processes cannot reach this turn", exc_info=True)
            await fanout.send(started)
            for warning in _warnings(preloaded):  # before the reply streams
                ids = {
                    "turn_id": started["turn_id"],
                    "client_message_id": started.get("client_message_id"),
                }
                await fanout.send({**warning, **ids})
            await run_turn(turn, emit, cancel, preloaded)
        finally:
            RUNNING.pop(str(turn.id), None)
            await fanout.close()

    def _done(task: asyncio.Task) -> None:
        # A done callback runs even for a task cancelled before its first step.
        nonlocal starting
        _TASKS.discard(task)
        if starting:
            starting = False
            STARTS.end()

    task = asyncio.get_running_loop().create_task(_run())
    _TASKS.add(task)
    task.add_done_callback(_done)
    return task


def request_cancel(conversation_id: str, turn_id: str | None = None) -> int:
    """Cancel this process's running turns of the conversation (or just ``turn_id``)."""
    cancelled = 0
    for running_id, (conv_id, event) in list(RUNNING.items()):
        if conv_id == str(conversation_id) and (not turn_id or turn_id == running_id):
            event.set()
            cancelled += 1
    return cancelled
