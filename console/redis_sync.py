"""The process's blocking Redis clients, one per timeout (a client holds a connection pool;
each caller's timeout is its own deadline: a cache read gives up in milliseconds, a task
send waits seconds)."""

from __future__ import annotations

from functools import cache

import redis
from django.conf import settings


@cache
def client(timeout_s: float) -> redis.Redis:
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
    )
