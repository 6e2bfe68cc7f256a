"""The product's ASGI app for a benchmark's daphne child, with its Celery tasks sent to the
private queue named in ``BENCH_CELERY_QUEUE`` (``roleplay.bench.queue``); otherwise the
same app (``console.asgi``)."""

from __future__ import annotations

import os

from console.asgi import application  # noqa: F401 - the app daphne serves
from roleplay.bench.queue import QUEUE_ENV, use_queue

if os.environ.get(QUEUE_ENV):
    use_queue(os.environ[QUEUE_ENV])
