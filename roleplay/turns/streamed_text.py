"""The reply streamed so far, stored on the running turn once a second.

A process that dies in mid-stream (a daphne killed, an OOM kill) runs no cleanup: before
this, the text its players had already read was lost with it. The turn row keeps what was
streamed up to a second before the death, and the abandoned-turn sweep
(``records.expire_abandoned``) stores it as a ``failed`` reply the player can continue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from django.db import DatabaseError

from console.db import run_db
from roleplay.models import Turn, TurnStatus

logger = logging.getLogger(__name__)

FLUSH_EVERY_S = 1.0


@contextlib.asynccontextmanager
async def kept(turn: Turn, parts: list[str]) -> AsyncIterator[None]:
    """While the block runs, store ``"".join(parts)`` on the turn whenever it grew, at
    most ``FLUSH_EVERY_S`` apart (the block appends to ``parts`` as it streams)."""
    task = asyncio.ensure_future(_flush_every_second(turn, parts))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _flush_every_second(turn: Turn, parts: list[str]) -> None:
    stored = 0
    while True:
        await asyncio.sleep(FLUSH_EVERY_S)
        if len(parts) == stored:
            continue
        stored = len(parts)
        try:
            # Only while it runs: a flush late after the turn's end must not touch it.
            await run_db(
                Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING).update,
                partial_reply="".join(parts),
            )
        except DatabaseError:  # the reply streams on; the next flush tries again
            logger.warning("could not store the partial reply of turn %s", turn.id)
