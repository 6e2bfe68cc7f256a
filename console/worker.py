"""Entry point of Celery workers: ``celery -A console.worker worker``.

Like ``manage.py`` and ``console.asgi``, it starts or joins the embedded PostgreSQL and
Redis unless ``DATABASE_URL`` / ``REDIS_URL`` name real servers, then hands over the app.
Every process the worker forks dies with it. A ready worker also runs the relay of Agent
V2's outbox (``roleplay.agentic.relay``). After each task the database connection goes
back to the pool, as after a request (``CELERY_DB_REUSE_MAX`` in the settings says why the
pool itself is kept).
"""

from __future__ import annotations

from console.embedded import ensure_environment

ensure_environment()

from celery.signals import task_postrun  # noqa: E402
from django.db import close_old_connections  # noqa: E402

from console.celery import app  # noqa: E402
from console.processes import forks_die_with_this_process  # noqa: E402
from roleplay.agentic.relay import attach_to_worker  # noqa: E402

# The pool processes and the beat scheduler are forks of the worker: they die with it, as
# the worker dies with the process that started it (``console.processes.spawn``).
forks_die_with_this_process()
attach_to_worker()


def _connection_back(**_) -> None:
    """The task's connection back to the pool (or closed, when it broke), as after a
    request."""
    close_old_connections()


task_postrun.connect(_connection_back, weak=False, dispatch_uid="console.worker.connection")

__all__ = ["app"]
