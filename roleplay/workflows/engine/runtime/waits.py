"""One wait, bounded by the run's cancel and its deadline (used for every model call, tool
batch, gate and state read or write)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from .result import RuntimeFailure


async def race(awaitable: Awaitable[Any], cancel: asyncio.Event, seconds: float) -> Any:
    """``awaitable``'s result, unless ``cancel`` is set first (``cancelled``) or ``seconds``
    pass (``timeout``); the abandoned work is cancelled either way."""
    work = asyncio.ensure_future(awaitable)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        done, _ = await asyncio.wait(
            {work, waiter}, timeout=max(seconds, 0.0), return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        waiter.cancel()
    if work in done and not cancel.is_set():
        return work.result()
    work.cancel()
    try:
        await work
    except BaseException:  # noqa: BLE001, S110 - the abandoned work's own end does not matter
        pass
    if cancel.is_set():
        raise RuntimeFailure("cancelled", "the run was cancelled")
    raise RuntimeFailure("timeout", "the run's deadline passed")
