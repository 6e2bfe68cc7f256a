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
from dataclasses import replace
from functools import partial

from django.utils import timezone

from console.db import run_db
from console.logging import turn_id_var
from memory.models import Message
from roleplay.conversations.services import titles as conversation_titles
from roleplay.llm.errors import ModelCancelled, ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.speaker import SpeakerLabel
from roleplay.llm.types import ModelRequest, StreamDone, TextDelta
from roleplay.models import Turn, TurnStatus
from roleplay.prompting.assembly import AssembledPrompt, ContextOverflow
from roleplay.turns import cancels, hub
from roleplay.turns.hub import TurnFanout
from roleplay.turns.priority import STARTS

from . import phases, streamed_text
from .context import TurnContext, actor_prompt, load_context
from .plugin import PLUGINS, TOOL_ROUNDS, PluginFailed, answer_calls, offered_tools
from .records import LEASE, STORAGE_ERRORS, answers_new_message, finish_turn

logger = logging.getLogger(__name__)

RENEW_EVERY = 10.0

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
    try:
        ctx = preloaded if preloaded is not None else await run_db(load_context, turn)
        if isinstance(ctx, Exception):
            raise ctx
        trace = ctx.trace
        await phases.run_stage("pre_actor", ctx, emit, cancel, partial(_renew_lease, turn))
        entered = partial(_beside, ctx, with_reply)
        async with streamed_text.kept(turn, parts):  # kept if this process dies mid-stream
            usage, result = await _stream_reply(
                ctx, emit, cancel, parts, entered=entered, writes=with_reply
            )
        finish_reason = result.finish_reason if result else None  # "length": cut short
        trace["model"] = {
            "model": result.model if result else None,
            "attempts": _attempts(result),
            "finish_reason": finish_reason,
        }
        trace["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
        content = "".join(parts)
        closed = await run_db(
            finish_turn,
            turn,
            content=content,
            status=TurnStatus.COMPLETE,
            usage=usage,
            trace=trace,
            config=ctx.config,
            also=with_reply,
        )
        if not closed:  # the sweep took this turn for dead and kept its streamed text
            await _tell_abandoned(turn, emit)
            return
        ctx.reply = (ctx.continuing or "") + content
        await _committed(ctx, emit)
        title = await _give_title(ctx)
        await emit(
            {
                "type": "turn.completed",
                "turn_id": str(turn.id),
                "kind": turn.kind,
                "assistant_message_id": str(turn.assistant_message_id),
                "usage": usage,
                "content": (ctx.continuing or "") + content,
                "finish_reason": finish_reason,
                **({"title": title} if title else {}),
            }
        )
    except (ModelCancelled, asyncio.CancelledError) as exc:
        await _fail(turn, parts, trace, TurnStatus.CANCELLED, "turn_cancelled", "cancelled", emit,
                    with_reply)  # fmt: skip
        if isinstance(exc, asyncio.CancelledError):
            raise
    except (ContextOverflow, PluginFailed, ModelError) as exc:
        await _fail(turn, parts, trace, TurnStatus.FAILED, exc.code, str(exc), emit, with_reply)
    except STORAGE_ERRORS:
        logger.warning("turn failed: the database is unavailable", exc_info=True)
        message = "the conversation could not be saved; try again in a moment"
        await _fail(turn, parts, trace, TurnStatus.FAILED, "storage_unavailable", message, emit,
                    with_reply)  # fmt: skip
    except Exception:
        logger.exception("turn failed")
        await _fail(turn, parts, trace, TurnStatus.FAILED, "internal_error", "turn failed", emit,
                    with_reply)  # fmt: skip
    else:
        await _after_commit(ctx, emit)
    finally:
        turn_id_var.reset(token)


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


async def _stream_reply(
    ctx: TurnContext,
    emit: Emit,
    cancel: asyncio.Event,
    parts: list[str],
    entered: Callable[[], None] = lambda: None,
    writes: list[Callable[[], None]] | None = None,
):
    """Assemble the Actor prompt, stream the reply into ``parts``; (usage, result). When a
    plug-in offers tools (its ``tools`` hook), their calls are answered between rounds.
    ``entered`` is called once the prompt is assembled and the Actor is asked; the calls'
    ``ModelCall`` rows go to ``writes``, written with the reply."""
    turn = ctx.turn
    prompt = actor_prompt(ctx)
    ctx.trace["prompt"] = prompt_trace(prompt)
    gateway = Gateway(
        turn.tenant, ctx.config, "actor", turn_id=turn.id, run_db=run_db, writes=writes
    )
    tools, owners = offered_tools(ctx)
    messages = list(prompt.messages)
    request = ModelRequest(
        messages,
        tools=tools,
        continue_final_message=ctx.continuing is not None,
        tolerate_missing_stream_metadata=ctx.tolerate_missing_stream_metadata,
    )
    seq, result, renewed = 0, None, time.monotonic()
    # A continue goes on from text already stored: only a new reply may open with a label.
    label = SpeakerLabel(None if ctx.continuing is not None else ctx.character.name)
    entered()

    async def send(text: str) -> None:
        nonlocal seq
        parts.append(text)
        await emit({"type": "delta", "turn_id": str(turn.id), "seq": seq, "text": text})
        seq += 1

    for round_ in range(TOOL_ROUNDS + 1):
        async for event in gateway.stream(request, cancel=cancel):
            if time.monotonic() - renewed > RENEW_EVERY:
                renewed = time.monotonic()
                await _renew_lease(turn)
            if isinstance(event, TextDelta):
                text = label.feed(event.text)
                if text:
                    await send(text)
            elif isinstance(event, StreamDone):
                result = event.result
        if not tools or result is None or not result.tool_calls:
            break
        messages = messages + await answer_calls(ctx, owners, result)
        last = round_ + 1 == TOOL_ROUNDS
        request = replace(request, messages=messages, tool_choice="none" if last else "auto")
    held = label.finish()
    if held:
        await send(held)
    return _usage(result), result


def prompt_trace(prompt: AssembledPrompt) -> dict:
    """What the console shows of the assembled prompt: each message's source and tokens."""
    trace = {
        "messages": len(prompt.messages),
        "tokens": prompt.prompt_tokens,
        "budget": prompt.budget,
        "dropped_history": prompt.dropped_history,
        "parts": [[part.source, part.role, part.tokens] for part in prompt.parts],
    }
    for name in ("unavailable", "unknown_macros", "missing_variables"):
        if getattr(prompt, name):
            trace[name] = list(getattr(prompt, name))
    return trace


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


async def _fail(turn, parts, trace, status, code, message, emit, with_reply=()) -> None:
    """Store the partial reply and close the turn (with ``with_reply``, the hooks' records of
    a turn that entered the Actor), then tell the player. If the database is down, the
    player is told at once and the turn is closed once it is back."""
    trace = {**trace, "error": code}
    close = partial(
        finish_turn, turn, content="".join(parts), status=status, error_code=code, trace=trace,
        also=list(with_reply),
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


def _usage(result) -> dict:
    if result is None:
        return {}
    u = result.usage
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "total_tokens": u.total_tokens,
    }


def _attempts(result) -> int:
    return getattr(result, "attempts", 1) if result else 0


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
