"""Entry point of Celery workers: ``celery -A console.worker worker``.

Like ``manage.py`` and ``console.asgi``, it starts or joins the embedded PostgreSQL and
Redis unless ``DATABASE_URL`` / ``REDIS_URL`` name real servers, then hands over the app.
A ready worker also runs the relay of Agent V2's outbox (``roleplay.agentic_relay``).
"""

from __future__ import annotations

from console.embedded import ensure_environment

ensure_environment()

from console.celery import app  # noqa: E402
from roleplay.agentic_relay import attach_to_worker  # noqa: E402

attach_to_worker()

__all__ = ["app"]
