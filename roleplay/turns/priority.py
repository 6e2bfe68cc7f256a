"""New turns before old streams: who gets the event loop first when a process is busy.

A turn's start (from the player's message to its first delta) is what a player waits on
with nothing on screen; the rest of a reply streams to someone already reading. When many
turns share one process, the first-come order of the event loop would make every new
message wait behind the deltas of every stream in flight. So while any turn is starting,
a stream holds back after each delta it sends, before reading its next chunk (the model
server's bytes wait in the socket buffer), for at most ``MAX_DEFER_S`` at a time, so it is
slowed under load but never starved. A turn counts as starting from the socket's
``begin()`` until its first event after ``turn.started`` (a delta, or its end).

Pure asyncio; one instance per process (``STARTS``).
"""

from __future__ import annotations

import asyncio

MAX_DEFER_S = 0.05


class StartsFirst:
    """``begin()`` / ``end()`` around each turn start; streams ``await yield_to_starts()``."""

    def __init__(self, max_defer: float = MAX_DEFER_S) -> None:
        self.max_defer = max_defer
        self.starting = 0
        self._waiters: set[asyncio.Future[None]] = set()

    def begin(self) -> None:
        self.starting += 1

    def end(self) -> None:
        self.starting = max(self.starting - 1, 0)
        if not self.starting:
            waiters, self._waiters = self._waiters, set()
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def yield_to_starts(self) -> None:
        """Wait (bounded) while any turn is starting; free when none is."""
        if not self.starting:
            return
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiters.add(waiter)
        timer = loop.call_later(self.max_defer, _release, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiters.discard(waiter)


def _release(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


STARTS = StartsFirst()
