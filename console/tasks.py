"""The console's Celery tasks (found by ``autodiscover_tasks``): the nightly backup."""

from console.backup.tasks import nightly_backups

__all__ = ["nightly_backups"]
