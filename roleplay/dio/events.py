"""DIO's socket events on the conversation (``docs/dio.md``): ``dio.accepted`` when a
submission is accepted, ``dio.completed {requestId, status, promptChanged, version}`` when
its task ends. Sent from web processes and Celery workers alike through the conversation
hub; a socket layer in trouble costs the event, never the task."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync

from roleplay.turns import hub

log = logging.getLogger(__name__)


def _send(conversation_id: str, event: dict) -> None:
    try:
        async_to_sync(hub.announce)(conversation_id, event)
    except Exception:
        log.warning("could not announce %s on %s", event.get("type"), conversation_id,
                    exc_info=True)  # fmt: skip


def accepted(conversation_id: str, receipt: dict) -> None:
    _send(conversation_id, {"type": "dio.accepted", **receipt})


def completed(
    conversation_id: str, request_id: str, status: str, prompt_changed: bool, version: int | None
) -> None:
    _send(
        conversation_id,
        {
            "type": "dio.completed",
            "requestId": request_id,
            "status": status,
            "promptChanged": prompt_changed,
            "version": version,
        },
    )
