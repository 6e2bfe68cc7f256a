"""Each process that generates turns beats in Redis; a turn whose process stopped beating
was abandoned.

The turn's lease (``records.LEASE``, 30 s) was the only sign of a dead process: after a
daphne process died in mid-stream its conversation answered nothing for half a minute. Now
the process that starts a turn stores its id as the turn's ``owner`` and beats once a second
(a key with a TTL of ``TURN_HEARTBEAT_TTL_SECONDS``, 5 s by default): the next message after
the key expires fails the turn at once (``records.expire_abandoned``). The lease stays as the
fallback when Redis cannot be reached: a turn started then has no owner.

The beat runs in a thread of its own, not on the event loop, so a loop kept busy by a long
request does not make its process look dead while it still streams.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid

from django.conf import settings

from console import redis_sync

logger = logging.getLogger(__name__)

BEAT_EVERY_S = 1.0
TIMEOUT_S = 0.5
_PREFIX = "roleplay:alive:"
_lock = threading.Lock()
_state: dict[str, object] = {"pid": None, "id": ""}
_stopping = threading.Event()


def _ttl_ms() -> int:
    return int(settings.TURN_HEARTBEAT_TTL_SECONDS * 1000)


def _beat(process: str) -> None:
    redis_sync.client(TIMEOUT_S).set(_PREFIX + process, "1", px=_ttl_ms())


def _beat_forever(process: str) -> None:
    failing = False
    while not _stopping.wait(BEAT_EVERY_S):
        try:
            _beat(process)
            failing = False
        except Exception:  # Redis away for a moment: beat again; the key may lapse
            if not failing:  # once per outage, not once a second
                logger.warning("process %s cannot beat: Redis does not answer", process)
            failing = True


def stop() -> None:
    """Stop this process's beat (a test run ending before its private Redis goes): its
    turns then look abandoned, as they would if it died."""
    _stopping.set()


def owner_id() -> str:
    """This process's id, beating; "" when Redis cannot be reached now (the turn then has
    only its lease). The first call of a process beats before it answers, so a turn row
    never names a process that has not beaten yet; later calls only read."""
    pid = os.getpid()
    with _lock:
        if _state["pid"] == pid:
            return str(_state["id"])
        process = f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:8]}"
        try:
            _beat(process)
        except Exception:
            logger.warning("no heartbeat: Redis cannot be reached; turns rely on their lease")
            return ""
        threading.Thread(
            target=_beat_forever, args=(process,), name="turn-heartbeat", daemon=True
        ).start()
        _state.update(pid=pid, id=process)  # a forked child starts its own
        return process


def dead(owners: set[str]) -> set[str]:
    """The processes of ``owners`` that stopped beating. Raises when Redis cannot answer:
    the caller then knows nothing and keeps the turns."""
    names = sorted(owner for owner in owners if owner)
    if not names:
        return set()
    beating = redis_sync.client(TIMEOUT_S).mget([_PREFIX + name for name in names])
    return {name for name, beat in zip(names, beating, strict=True) if beat is None}
