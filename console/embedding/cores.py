"""How many threads a local embedder's engine runs in this process: ``OMP_NUM_THREADS``, which
``console/__init__.py`` sets to 1 unless an operator set it (our processes are many on a few
shared cores), read the same way by the e5 engine and by ONNX Runtime."""

from __future__ import annotations

import os

THREADS_ENV = "OMP_NUM_THREADS"


def threads() -> int:
    """``OMP_NUM_THREADS`` (1 when unset or not a positive whole number)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1
