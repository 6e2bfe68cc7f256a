"""Entry point of Celery workers: ``celery -A console.worker worker``.

Like ``manage.py`` and ``console.asgi``, it starts or joins the embedded PostgreSQL and
Redis unless ``DATABASE_URL`` / ``REDIS_URL`` name real servers, then hands over the app.
"""

from __future__ import annotations

from console.embedded import ensure_environment

ensure_environment()

from console.celery import app  # noqa: E402

__all__ = ["app"]
