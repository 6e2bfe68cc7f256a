"""The network address of a request's client: one rule for login throttling and the audit log.

``REMOTE_ADDR`` is the peer that opened the connection, the only address a client cannot
choose. ``X-Forwarded-For`` is written by whoever sent the request, so it is read only when
``TRUSTED_PROXY_COUNT`` says how many reverse proxies of ours stand in front: each appends the
address it saw, so the client is the ``TRUSTED_PROXY_COUNT``-th entry from the right, and
anything further left was typed by the client. Unset (0), the header is ignored, so a client
cannot dodge the per-address throttle by sending a new header with every guess.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings


def client_address(request) -> str | None:
    """The client's IP address as text, or None when there is no usable one."""
    proxies = getattr(settings, "TRUSTED_PROXY_COUNT", 0)
    candidate = request.META.get("REMOTE_ADDR")
    if proxies > 0:
        hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        hops = [h for h in hops if h]
        # Too few hops: the request bypassed a proxy, so the peer address is all we know.
        if len(hops) >= proxies:
            candidate = hops[-proxies]
    return _valid(candidate)


def client_user_agent(request) -> str:
    """The ``User-Agent`` header, cut to the length the audit log keeps."""
    return request.META.get("HTTP_USER_AGENT", "")[:255]


def _valid(address: str | None) -> str | None:
    if not address:
        return None
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None
