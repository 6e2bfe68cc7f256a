"""Fan-out of a conversation's stream events to every socket watching it.

Sockets in the process that runs the turn get each event straight from the turn's task: one
JSON encoding per event, no trip through Redis, so a delta reaches the player as soon as the
model server sends it. Sockets in other daphne processes get the events through the channel
layer's group for the conversation. Deltas, the bulk of the traffic, are published there only
while another process has a socket on the conversation (Redis ``PUBSUB NUMSUB`` on the
group's channel, re-checked every ``RECHECK_S`` during a turn); every other event is always
published, and ``turn.completed`` carries the whole text, so a socket that joins elsewhere
mid-turn still ends with the full reply.

Publishing to Redis never holds up the turn: a pump task per turn publishes in order behind
it. Every process ignores its own events when they come back from Redis (``origin``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
import weakref
from typing import Any, Protocol

import orjson
from channels.layers import get_channel_layer
from django.conf import settings

logger = logging.getLogger(__name__)

PROCESS = uuid.uuid4().hex
RECHECK_S = 0.5
DRAIN_TIMEOUT_S = 5.0
STREAM_EVENT = "stream.event"


class Socket(Protocol):
    async def send(self, text_data: str | None = None, bytes_data: bytes | None = None): ...


# conversation id -> this process's sockets on it
_LOCAL: dict[str, set[Socket]] = {}
_REDIS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def group_name(conversation_id) -> str:
    return f"conv.{conversation_id}"


def join(conversation_id, socket: Socket) -> None:
    _LOCAL.setdefault(str(conversation_id), set()).add(socket)


def leave(conversation_id, socket: Socket) -> None:
    sockets = _LOCAL.get(str(conversation_id))
    if sockets is not None:
        sockets.discard(socket)
        if not sockets:
            del _LOCAL[str(conversation_id)]


def is_own(message: dict) -> bool:
    """A channel-layer stream event this process published (and so already delivered)."""
    return message.get("origin") == PROCESS


def encode(event: dict) -> str:
    return orjson.dumps(event).decode()


async def deliver_local(conversation_id, text: str) -> None:
    for socket in list(_LOCAL.get(str(conversation_id), ())):
        try:
            await socket.send(text_data=text)
        except Exception:  # a socket closing under us must not end the turn
            logger.debug("dropping a local socket that failed to send", exc_info=True)
            leave(conversation_id, socket)


def message_updated(message) -> dict:
    """``message.updated``: a stored message's text and which alternative it shows (one
    query: it counts the alternatives, so call it on a database thread)."""
    return {
        "type": "message.updated",
        "message_id": str(message.id),
        "role": message.role,
        "content": message.content,
        "reasoning": message.reasoning,
        "status": message.status,
        "selected_alternative": message.selected_alternative,
        "alternatives": message.alternatives.count(),
        "edited": message.edited,
    }


async def announce(conversation_id, event: dict) -> None:
    """One event that is not part of a turn's stream (a message edited, deleted, another
    alternative picked) to every socket on the conversation, here and in other processes."""
    await deliver_local(conversation_id, encode(event))
    try:
        await get_channel_layer().group_send(
            group_name(conversation_id), {"type": STREAM_EVENT, "event": event, "origin": PROCESS}
        )
    except Exception:  # Redis trouble costs other processes' sockets, not the change itself
        logger.warning("could not announce a change to other processes", exc_info=True)


def _redis():
    """A Redis client for this event loop, on the channel layer's (single) host."""
    import redis.asyncio as aioredis

    loop = asyncio.get_running_loop()
    client = _REDIS.get(loop)
    if client is None:
        host = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]
        address = host["address"] if isinstance(host, dict) else host
        client = _REDIS[loop] = aioredis.Redis.from_url(address)
    return client


async def remote_listeners(conversation_id) -> int:
    """How many other processes have a socket on the conversation."""
    layer = get_channel_layer()
    naming = getattr(layer, "_get_group_channel_name", None)
    if naming is None:  # not the pub/sub layer: no way to count, so assume listeners
        return 1
    counts = await _redis().pubsub_numsub(naming(group_name(conversation_id)))
    subscribed = int(counts[0][1]) if counts else 0
    # This process is one of the subscribers while it holds a socket on the conversation.
    return max(subscribed - (1 if _LOCAL.get(str(conversation_id)) else 0), 0)


class TurnFanout:
    """The ordered event stream of one turn: ``await send(event)`` for each, then
    ``await close()``. Local sockets get the event before ``send`` returns."""

    def __init__(self, conversation_id) -> None:
        self.conversation_id = str(conversation_id)
        self.group = group_name(conversation_id)
        self._queue: asyncio.Queue[dict | None] = asyncio.Queue()
        self._remote = True  # until the first check says otherwise
        self._checked_at = float("-inf")
        self._pump = asyncio.get_running_loop().create_task(self._run())

    def _stale(self) -> bool:
        return time.monotonic() - self._checked_at > RECHECK_S

    async def send(self, event: dict) -> None:
        await deliver_local(self.conversation_id, encode(event))
        if event.get("type") != "delta" or self._remote or self._stale():
            self._queue.put_nowait(event)

    async def close(self) -> None:
        """Publish what is still queued (bounded wait), then stop the pump."""
        self._queue.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.shield(self._pump), DRAIN_TIMEOUT_S)
        except TimeoutError:
            self._pump.cancel()
            logger.warning("gave up publishing the rest of a turn's events to other processes")

    async def _run(self) -> None:
        layer = get_channel_layer()
        failed = False
        while (event := await self._queue.get()) is not None:
            try:
                if self._stale():
                    self._checked_at = time.monotonic()
                    self._remote = await remote_listeners(self.conversation_id) > 0
                if event.get("type") == "delta" and not self._remote:
                    continue
                await layer.group_send(
                    self.group, {"type": STREAM_EVENT, "event": event, "origin": PROCESS}
                )
            except Exception:  # Redis trouble costs other processes' sockets, not the turn
                self._remote = False  # no deltas until a re-check succeeds
                if not failed:  # once per turn, not once per event
                    failed = True
                    logger.warning(
                        "could not publish a turn's events to other processes", exc_info=True
                    )
