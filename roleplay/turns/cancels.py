"""Cancels reach the process running a turn, wherever they were sent.

A ``cancel`` frame can arrive on any daphne process; the turn runs in one. The frame's
process sets the cancel of its own running turns at once and sends ``turn.cancel`` to one
channel-layer group that every process running turns listens to (one channel per process,
joined at its first turn). Each listener sets the cancel event of the turn if it runs there.
So a cancel arrives even when no socket on the conversation is left in the generating
process, and starting a turn costs no Redis round trip for it. Cancels are rare; every
process hearing every one of them costs nothing worth counting.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable

from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

CANCEL = "turn.cancel"
GROUP = "turn-cancels"

OnCancel = Callable[[str, str | None], object]

# event loop -> this process's listener task
_LISTENERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task]
_LISTENERS = weakref.WeakKeyDictionary()


async def listen(on_cancel: OnCancel) -> None:
    """Make sure this process (event loop) hears cancels: ``on_cancel(conversation_id,
    turn_id or None)`` for each. Only the first call per loop talks to Redis."""
    loop = asyncio.get_running_loop()
    task = _LISTENERS.get(loop)
    if task is not None and not task.done():
        return
    layer = get_channel_layer()
    channel = await layer.new_channel("turns.")
    await layer.group_add(GROUP, channel)
    _LISTENERS[loop] = loop.create_task(_receive(layer, channel, on_cancel))


async def _receive(layer, channel: str, on_cancel: OnCancel) -> None:
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


async def send(conversation_id, turn_id: str | None) -> None:
    """Ask every process to cancel the conversation's running turn (or just ``turn_id``)."""
    await get_channel_layer().group_send(
        GROUP,
        {"type": CANCEL, "conversation_id": str(conversation_id), "turn_id": turn_id or ""},
    )
