"""Auto-mode of a group chat: after a reply, up to ``auto_turns`` further replies by other
members, one after another, each ``auto_delay_ms`` after the last one ended.

A chain lives in the process whose socket started its first turn (its turns outlive the
socket, as every turn does). It stops at once when the player sends a message or a cancel
on this process; on any process, a cancelled or failed reply ends it (the chain reads the
turn's end), and so does a player's message stored meanwhile (the chain goes on only while
the last message is the reply it followed). The rules are ``roleplay.groups.auto``'s, which
the REST turn's ``auto`` follows too."""

from __future__ import annotations

import asyncio
import logging

from console.db import run_db
from console.failures import DomainError
from roleplay import turns
from roleplay.groups import auto
from roleplay.models import Conversation, Turn, TurnKind
from roleplay.turns.priority import STARTS

logger = logging.getLogger(__name__)

# conversation id -> its chain running in this process
CHAINS: dict[str, asyncio.Task] = {}


def stop(conversation_id) -> bool:
    """Stop the conversation's chain in this process (its running reply goes on)."""
    task = CHAINS.pop(str(conversation_id), None)
    if task is None:
        return False
    task.cancel()
    return True


def follow(conversation: Conversation, turn: Turn, generating: asyncio.Task) -> None:
    """Let the group answer itself after ``turn`` (whose reply ``generating`` streams)."""
    stop(conversation.pk)
    task = asyncio.get_running_loop().create_task(_chain(conversation.pk, turn, generating))
    CHAINS[str(conversation.pk)] = task

    def _done(done: asyncio.Task) -> None:
        if CHAINS.get(str(conversation.pk)) is done:
            CHAINS.pop(str(conversation.pk), None)

    task.add_done_callback(_done)


async def _chain(conversation_id, turn: Turn, generating: asyncio.Task) -> None:
    try:
        found = await run_db(auto.chain_settings, conversation_id)
        if found is None:
            return
        conversation, remaining = found
        while remaining > 0:
            await asyncio.wait([generating])  # never cancels the reply itself
            if not await run_db(auto.may_follow, turn, conversation):
                return
            if conversation.auto_delay_ms:
                await asyncio.sleep(conversation.auto_delay_ms / 1000)
            started = await _next(conversation, auto.next_client_id(turn))
            if started is None:
                return
            turn, generating = started
            remaining -= 1
    except asyncio.CancelledError:
        raise
    except Exception:
        logger.exception("the auto-mode chain of conversation %s stopped", conversation_id)


async def _next(conversation: Conversation, client_id: str):
    """Start the next member's reply: (turn, its task), or None when it cannot start."""
    STARTS.begin()
    try:
        start, preloaded = await run_db(
            turns.begin_and_load, conversation, client_id, kind=TurnKind.GROUP
        )
    except (DomainError, *turns.STORAGE_ERRORS) as exc:
        STARTS.end()
        logger.info("auto-mode stops: %s", getattr(exc, "code", exc))
        return None
    except BaseException:
        STARTS.end()
        raise
    if start.duplicate:  # another process follows the same reply
        STARTS.end()
        return None
    event = turns.started_event(start, client_id, preloaded)
    return start.turn, turns.launch(start.turn, {**event, "auto": True}, preloaded)
