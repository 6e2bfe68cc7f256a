"""The Celery app, bound when Django loads (``ConsoleConfig.ready``); defines, starts nothing.

Workers start through the entry point ``celery -A console.worker worker``, which starts or
joins the embedded servers first.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("roleplay")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
