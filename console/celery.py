"""The Celery app. Workers start with ``celery -A console.celery worker``."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("roleplay")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
