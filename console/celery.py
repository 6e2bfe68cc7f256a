"""The Celery app, bound when Django loads (``ConsoleConfig.ready``); defines, starts nothing.

Workers start through the entry point ``celery -A console.worker worker``, which starts or
joins the embedded servers first.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("roleplay")


def _settings() -> dict:
    """The ``CELERY_*`` settings, copied once into a plain dict: Celery reads its
    configuration on every send, and through Django's lazy settings object each read costs
    a chain of lookups (about a third of a millisecond per task sent)."""
    from django.conf import settings

    return {name: getattr(settings, name) for name in dir(settings) if name.startswith("CELERY_")}


app.config_from_object(_settings(), namespace="CELERY")
app.autodiscover_tasks()
