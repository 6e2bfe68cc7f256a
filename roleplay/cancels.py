"""Cancels reach the process running a turn, wherever they were sent.

A ``cancel`` frame can arrive on any daphne process; the turn runs in one. The frame's
process sets the cancel of its own running turns at once and sends ``turn.cancel`` to the
conversation's channel-layer group. Every process running a turn has one channel of its own
in the groups of those conversations (``watch`` / ``unwatch`` around the turn), and a
listener on that channel sets the turn's cancel event. So a cancel arrives even when no
socket on the conversation is left in the generating process.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable

from channels.layers import get_channel_layer

from roleplay.hub import group_name

logger = logging.getLogger(__name__)

CANCEL = "turn.cancel"

# event loop -> (this process's channel, its listener task)
_LISTENERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[str, asyncio.Task]]
_LISTENERS = weakref.WeakKeyDictionary()


async def _channel(on_cancel: Callable[[str, str | None], object]) -> str:
    loop = asyncio.get_running_loop()
    known = _LISTENERS.get(loop)
    if known is not None and not known[1].done():
        return known[0]
    layer = get_channel_layer()
    channel = await layer.new_channel("turns.")
    task = loop.create_task(_listen(layer, channel, on_cancel))
    _LISTENERS[loop] = (channel, task)
    return channel


async def _listen(layer, channel: str, on_cancel: Callable[[str, str | None], object]) -> None:
    while True:
        try:
            message = await layer.receive(channel)
        except asyncio.CancelledError:
            raise
        except Exception:  # Redis trouble: keep listening once it is back
            logger.warning("cancel listener could not receive", exc_info=True)
            await asyncio.sleep(1.0)
            continue
        if message.get("type") == CANCEL and message.get("conversation_id"):
            on_cancel(message["conversation_id"], message.get("turn_id") or None)


async def watch(conversation_id, on_cancel: Callable[[str, str | None], object]) -> None:
    """Listen for cancels of the conversation while a turn of it runs here."""
    channel = await _channel(on_cancel)
    await get_channel_layer().group_add(group_name(conversation_id), channel)


async def unwatch(conversation_id) -> None:
    known = _LISTENERS.get(asyncio.get_running_loop())
    if known is not None:
        await get_channel_layer().group_discard(group_name(conversation_id), known[0])


async def send(conversation_id, turn_id: str | None) -> None:
    """Ask every process to cancel the conversation's running turn (or just ``turn_id``)."""
    await get_channel_layer().group_send(
        group_name(conversation_id),
        {"type": CANCEL, "conversation_id": str(conversation_id), "turn_id": turn_id or ""},
    )
