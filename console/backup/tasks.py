"""The nightly backup (``CELERY_BEAT_SCHEDULE["nightly-backups"]``): a thin wrapper."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="console.nightly_backups", acks_late=True)
def nightly_backups() -> dict[str, str]:
    return services.nightly_backups()
