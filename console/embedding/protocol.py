"""What every embedder is: texts in, equal-length vectors out, with a version that names
the model that made them.

Whoever stores vectors stores the ``embedding_version`` with them (the worldbook's index of a
revision, memory's recall rows), so a change of embedder never compares incomparable
vectors: what was embedded under another version is embedded again.
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into equal-length vectors; cosine similarity compares them."""

    embedding_version: str
    dimensions: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector of ``dimensions`` floats per text, in order."""
        ...


def cosine(left: list[float], right: list[float]) -> float:
    """Cosine similarity; 0.0 when either vector is zero."""
    dot = sum(a * b for a, b in zip(left, right, strict=True))
    norms = math.sqrt(sum(a * a for a in left)) * math.sqrt(sum(b * b for b in right))
    return dot / norms if norms else 0.0
