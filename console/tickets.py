"""One-time signed WebSocket tickets for integrators' own front ends.

A ticket names one conversation and expires after ``WS_TICKET_TTL_SECONDS``. It is signed
(so it cannot be forged) and its id is burnt in Redis on first use (so it cannot be replayed).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core import signing
from django.core.cache import cache

_SALT = "roleplay.ws-ticket"


def issue_ticket(conversation) -> tuple[str, int]:
    ttl = settings.WS_TICKET_TTL_SECONDS
    payload = {
        "c": str(conversation.id),
        "t": str(conversation.tenant_id),
        "j": secrets.token_hex(8),
    }
    return signing.dumps(payload, salt=_SALT, compress=True), ttl


def redeem_ticket(ticket: str, conversation_id: str) -> str | None:
    """The tenant id if the ticket is valid for this conversation and unused, else None."""
    try:
        payload = signing.loads(ticket, salt=_SALT, max_age=settings.WS_TICKET_TTL_SECONDS)
    except signing.BadSignature:
        return None
    if payload.get("c") != str(conversation_id):
        return None
    if not cache.add(f"ws-ticket:{payload['j']}", 1, timeout=settings.WS_TICKET_TTL_SECONDS + 5):
        return None
    return payload["t"]
