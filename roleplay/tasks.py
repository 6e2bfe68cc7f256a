"""Background work of the conversation runtime (thin wrappers around services)."""

from __future__ import annotations

from celery import shared_task

from roleplay import turns


@shared_task(name="roleplay.expire_abandoned_turns")
def expire_abandoned_turns() -> int:
    """Fail running turns whose process died (lease expired); idempotent, runs every minute,
    so a conversation nobody writes to again is not shown as generating for ever."""
    return turns.expire_abandoned()
