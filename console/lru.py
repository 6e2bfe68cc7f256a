"""A small thread-safe LRU: daphne serves sync views from a thread pool, and a turn's
database work runs on a pool of threads (``console.db``), so a process-wide cache is read
and written from several threads at once. ``None`` is never stored: ``get`` returns it for
a miss."""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from typing import Any


class Lru:
    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[Any, Any] = OrderedDict()
        self.lock = Lock()

    def get(self, key):
        with self.lock:
            value = self.items.get(key)
            if value is not None:
                self.items.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)

    def __len__(self) -> int:
        return len(self.items)
