"""What every outbound workflow call shares: the deployment's address policy, the key read
from the environment, and one bound on time and cancel.

The address policy comes from two settings (``WORKFLOW_TOOLS_ALLOW_LOOPBACK``,
``WORKFLOW_TOOLS_ALLOW_PRIVATE``; both off by default): a tool on this machine or in the
same private network is reachable only when the deployment says so. Link-local addresses
(cloud metadata) never are (``console.outbound``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from typing import TypeVar

from django.conf import settings

from console import outbound
from roleplay.workflows.engine.contracts import CapabilityError

T = TypeVar("T")


def policy() -> outbound.Policy:
    return outbound.Policy(
        allow_loopback=bool(getattr(settings, "WORKFLOW_TOOLS_ALLOW_LOOPBACK", False)),
        allow_private=bool(getattr(settings, "WORKFLOW_TOOLS_ALLOW_PRIVATE", False)),
    )


def key_status(api_key_env: str) -> str:
    """``not_needed`` | ``set`` | ``missing``: the key's presence, never its value."""
    if not api_key_env:
        return "not_needed"
    return "set" if os.environ.get(api_key_env) else "missing"


def api_key(api_key_env: str) -> str | None:
    """The key named by ``api_key_env`` (None when none is named); a named key that is not
    set on this server is ``key_missing``."""
    if not api_key_env:
        return None
    value = os.environ.get(api_key_env)
    if not value:
        raise CapabilityError("key_missing", f"the key variable ${api_key_env} is not set")
    return value


async def bounded(work: Awaitable[T], cancel: asyncio.Event, timeout_s: float) -> T:
    """``work``'s result, unless ``timeout_s`` passes first (``timeout``) or ``cancel`` is
    set (``cancelled``); either way the work is cancelled and awaited, so no connection is
    left open behind the node."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        done, _ = await asyncio.wait(
            {task, waiter}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        waiter.cancel()
    if task in done:
        return task.result()
    task.cancel()
    try:
        await task
    except (asyncio.CancelledError, Exception):
        pass  # the work's own end, once cancelled
    if cancel.is_set():
        raise CapabilityError("cancelled", "the run was cancelled")
    raise CapabilityError("timeout", f"no answer within {round(timeout_s * 1000)} ms")
