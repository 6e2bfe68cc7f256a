"""The offline fallback embedder, which needs no model: feature hashing of character n-grams.

:class:`HashingEmbedder` is what runs when the sentence model (``minilm``) is not installed,
or when a deployment asks for it: this product must run with no network and no model
download. It hashes character n-grams into a fixed number of signed buckets (the "hashing
trick"), which captures shared words and characters rather than meaning; that is enough to
rank "the copper key opens the side gate" near "copper key" and is an honest baseline.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from functools import lru_cache

from console.embedding.words import TOKEN_RE, fold

HASH_DIMENSIONS = 384
HASH_VERSION = "hash-ngram-v1-384"


def hashing_features(text: str) -> Counter[str]:
    """The n-gram features of ``text``: CJK 1-2 grams; Latin words and their 3-grams.

    Words are padded (``#key#``) before taking 3-grams so that prefixes and suffixes count,
    and a two-letter word still yields one gram. Feature names carry a kind prefix so that a
    word and an identical 3-gram never collide by construction.
    """
    features: Counter[str] = Counter()
    for match in TOKEN_RE.finditer(fold(text)):
        run = match.group()
        if match.lastgroup == "cjk":
            for index, char in enumerate(run):
                features["c1:" + char] += 1
                if index + 1 < len(run):
                    features["c2:" + run[index : index + 2]] += 1
            continue
        features["w:" + run] += 1
        padded = f"#{run}#"
        for index in range(len(padded) - 2):
            features["g3:" + padded[index : index + 3]] += 1
    return features


@lru_cache(maxsize=65536)
def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    """Stable bucket and sign of a feature: blake2b does not vary across processes."""
    digest = hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value % dimensions, (1.0 if (value >> 63) & 1 else -1.0)


class HashingEmbedder:
    """Signed feature hashing of character n-grams, L2-normalised (offline default).

    Counts are damped with ``1 + log(tf)`` so a word repeated many times does not drown the
    rest of the text. A text with no features (empty, punctuation only) maps to the zero
    vector, which has cosine 0 with everything.
    """

    embedding_version: str = HASH_VERSION
    dimensions: int = HASH_DIMENSIONS

    def __init__(self, dimensions: int = HASH_DIMENSIONS):
        if dimensions <= 0:
            raise ValueError("dimensions must be positive")
        self.dimensions = dimensions
        self.embedding_version = (
            HASH_VERSION if dimensions == HASH_DIMENSIONS else f"hash-ngram-v1-{dimensions}"
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._embed_one(text) for text in texts]

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        """As :meth:`embed`: n-grams have no query side."""
        return self.embed(texts)

    def _embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for feature, count in hashing_features(text).items():
            index, sign = _bucket(feature, self.dimensions)
            vector[index] += sign * (1.0 + math.log(count))
        norm = math.sqrt(sum(value * value for value in vector))
        if norm == 0.0:
            return vector
        return [value / norm for value in vector]
