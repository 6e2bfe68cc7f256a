"""Bursts per account and per address (players' sign-ups and chat turns): a fixed window
counted in Redis with one atomic ``INCR`` per request (the limits are
``settings.RATE_LIMITS``: requests per window).

Over a limit raises ``RateLimited`` with ``retry_after`` (seconds until the window ends),
which the REST API answers as 429 with ``Retry-After``; pages use :func:`limited` and the
chat socket answers an ``error`` event. Redis being down lets requests through: a rate limit
is a guard, not a rule the data depends on (the quotas are that)."""

from __future__ import annotations

import logging
import math
import time
from functools import wraps
from types import SimpleNamespace

from django.conf import settings
from django.core.cache import cache
from django.shortcuts import render

from console.clients import client_address
from console.failures import TooMany

logger = logging.getLogger(__name__)


class RateLimited(TooMany):
    """Too many requests in a short window (429 ``rate_limited`` with ``retry_after``)."""

    default_code = "rate_limited"


def hit(name: str, who: str | None, *, now: float | None = None) -> None:
    """Count one request of ``who`` against limit ``name``; ``RateLimited`` when over."""
    hit_all(((name, who),), now=now)


def hit_all(limits, *, now: float | None = None) -> None:
    """Count one request against each ``(name, who)`` of ``limits`` in one Redis round trip
    (a ``who`` of None, or a limit of 0, is not counted); ``RateLimited`` for the first one
    over its limit."""
    now = time.time() if now is None else now
    counted = []
    for name, who in limits:
        count, window = settings.RATE_LIMITS[name]
        if count and who:
            slot = int(now // window)
            counted.append((count, window, slot, cache.make_key(f"ratelimit:{name}:{who}:{slot}")))
    if not counted:
        return
    try:
        client = cache._cache.get_client(counted[0][3], write=True)
        pipe = client.pipeline()
        for _count, window, _slot, key in counted:
            pipe.incr(key)
            pipe.expire(key, window + 1)
        used = pipe.execute()[::2]
    except Exception:  # Redis cannot answer: let the request through
        logger.warning("cannot count rate limits; letting the request through")
        return
    for (count, window, slot, _key), value in zip(counted, used, strict=True):
        if value > count:
            wait = max(1, math.ceil((slot + 1) * window - now))
            raise RateLimited(
                message=f"too many requests; try again in {wait} s",
                details={"limit": count, "window": window, "retry_after": wait},
            )


def socket_address(scope) -> str | None:
    """A socket's client address, by the same rule as a request's (trusted proxies)."""
    client = scope.get("client") or (None, None)
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    meta = {"REMOTE_ADDR": client[0], "HTTP_X_FORWARDED_FOR": headers.get("x-forwarded-for", "")}
    return client_address(SimpleNamespace(META=meta))


def chat_turn(account: str | None, address: str | None) -> None:
    """A chat turn's bursts: per account (the player) and per address."""
    hit_all((("chat_account", account), ("chat_address", address)))


def rest_turn(principal) -> None:
    """A turn run over REST: bursts per caller, an API token or else a console user."""
    token, user = getattr(principal, "token", None), getattr(principal, "user", None)
    who = f"token:{token.pk}" if token is not None else f"user:{user.pk}" if user else None
    hit_all((("chat_token", who),))


def limited(name: str):
    """A page whose POSTs count against limit ``name`` per client address; over it, the
    page answers 429 with ``Retry-After``."""

    def decorate(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if request.method == "POST":
                try:
                    hit(name, client_address(request))
                except RateLimited as exc:
                    wait = exc.details["retry_after"]
                    response = render(request, "app/rate_limited.html", {"wait": wait}, status=429)
                    response["Retry-After"] = str(wait)
                    return response
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
