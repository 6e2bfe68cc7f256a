"""The tokenizer the engine counts budgets with, handed in by the caller.

The engine stays pure: it does not load a tokenizer, it takes one (the Django side passes
cl100k, as the seed counts budgets; tests may pass any counter). Counts are cached per
tokenizer, so ``name`` must identify the counting exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

CACHE_MAX_CHARS = 20_000  # texts longer than this are counted, not cached (keys stay alive)


@dataclass(frozen=True)
class Tokenizer:
    """``count(text)`` tokens of text; ``name`` is what selection results report."""

    name: str
    count: Callable[[str], int]

    def cached(self, text: str) -> int:
        """``count(text)``, remembered for short texts (entries repeat across turns)."""
        if len(text) > CACHE_MAX_CHARS:
            return self.count(text)
        return _cached(self, text)


@lru_cache(maxsize=4096)
def _cached(tokenizer: Tokenizer, text: str) -> int:
    return tokenizer.count(text)
