"""Work beside the Actor, gathered across turns: one database call for all that is ready.

Each turn with work beside its reply (a background run's record and task) hands it over once
its first delta is out. Waiting turns go first (``STARTS``, bounded), and what gathered
meanwhile, from every turn in this process, then runs in one database call: one thread
hand-off and one pooled connection for the lot, not one each, which on a busy machine is
most of what such work costs. Each piece runs on its own (a failure is logged, the rest
still runs), and each turn's :func:`run` returns when its own pieces are done.

One gatherer per event loop (tests run several loops in one process).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import weakref
from collections.abc import Callable

from console.db import run_db
from roleplay.priority import STARTS

logger = logging.getLogger(__name__)

Work = list[Callable[[], None]]
_Owned = tuple[object, Work, contextvars.Context]


class _Gatherer:
    def __init__(self) -> None:
        self.pending: list[tuple[_Owned, asyncio.Future[None]]] = []
        self.flushing = False

    async def run(self, owner: object, work: Work) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # each turn's pieces run in that turn's context (its log lines name it)
        self.pending.append(((owner, work, contextvars.copy_context()), done))
        if not self.flushing:
            self.flushing = True
            asyncio.ensure_future(self._flush())
        await done

    async def _flush(self) -> None:
        try:
            await STARTS.yield_to_starts()
        finally:
            batch, self.pending, self.flushing = self.pending, [], False
        try:
            await run_db(_run_all, [owned for owned, _ in batch])
        except Exception as exc:  # the database call itself failed: each turn hears of it
            for _, done in batch:
                if not done.done():
                    done.set_exception(exc)
        else:
            for _, done in batch:
                if not done.done():
                    done.set_result(None)


def _run_all(batch: list[_Owned]) -> None:
    for owner, work, context in batch:
        context.run(_run_own, owner, work)


def _run_own(owner: object, work: Work) -> None:
    for fn in work:
        try:
            fn()
        except Exception:
            logger.exception("work beside turn %s failed", owner)


_GATHERERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Gatherer] = (
    weakref.WeakKeyDictionary()
)


async def run(owner: object, work: Work) -> None:
    """Run ``work`` (``owner``'s, named in logs) with whatever else is ready beside the
    Actor in this process, after the turns starting now; returns when it is done."""
    loop = asyncio.get_running_loop()
    gatherer = _GATHERERS.get(loop)
    if gatherer is None:
        gatherer = _GATHERERS[loop] = _Gatherer()
    await gatherer.run(owner, work)
