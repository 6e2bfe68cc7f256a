"""What every embedder is: texts in, equal-length vectors out, with a version that names
the model that made them.

Texts to be found (messages, entries, worldbook chunks) go through ``embed``, the questions
asked of them through ``embed_query``: a model trained with different marks on the two sides
(e5's ``query: `` and ``passage: ``) embeds each side as it was trained to; for a symmetric
model (MiniLM, the hashing embedder, an OpenAI-compatible endpoint) the two are the same.

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
        """One vector of ``dimensions`` floats per text to be found, in order."""
        ...

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        """One vector per search query, in order, comparable with ``embed``'s."""
        ...


def cosine(left: list[float], right: list[float]) -> float:
    """Cosine similarity; 0.0 when either vector is zero."""
    dot = sum(a * b for a, b in zip(left, right, strict=True))
    norms = math.sqrt(sum(a * a for a in left)) * math.sqrt(sum(b * b for b in right))
    return dot / norms if norms else 0.0
