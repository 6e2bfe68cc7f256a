"""Recall's embedder. A tenant whose memory settings name an ``embedder`` uses that
OpenAI-compatible ``/v1/embeddings`` endpoint (``worldbook.engine.openai_embedder``; the key
read from the environment variable it names). Otherwise the real sentence model when it is
installed (all-MiniLM-L6-v2, run with numpy: ``worldbook.engine.minilm``), else the offline
hashing embedder the worldbook uses; ``RECALL_EMBEDDER=hashing`` keeps the hashing one.
Each index row records the embedder it was made with, and a message indexed under another
embedder is indexed again (``memory.recall.indexing.rebuild_stale``).
"""

from __future__ import annotations

import hashlib
import json
import os

from console.lru import Lru
from memory.configs.selectors import config_for
from worldbook.engine import minilm
from worldbook.engine.openai_embedder import EmbeddingUnavailable, OpenAIEmbedder
from worldbook.indexing import default_embedder

__all__ = ["EmbeddingUnavailable", "local_embedder", "recall_embedder"]

_REMOTE = Lru(64)


def local_embedder():
    """The deployment's own embedder: the sentence model, else the hashing one."""
    if os.environ.get("RECALL_EMBEDDER", "minilm") != "hashing":
        model = minilm.load()
        if model is not None:
            return model
    return default_embedder()


def recall_embedder(tenant=None):
    """``tenant``'s embedder (the deployment's own without one, or when it names none)."""
    spec = config_for(tenant).embedder if tenant is not None else None
    return _remote(spec) if spec else local_embedder()


def _remote(spec: dict) -> OpenAIEmbedder:
    """One client per settings and key (kept, so its connections are reused)."""
    env = spec.get("api_key_env") or ""
    key = os.environ.get(env) if env else None
    cache_key = json.dumps(spec, sort_keys=True) + hashlib.sha256((key or "").encode()).hexdigest()
    found = _REMOTE.get(cache_key)
    if found is None:
        found = OpenAIEmbedder(
            spec["base_url"],
            spec["model"],
            api_key=key,
            dimensions=spec.get("dimensions"),
            timeout_ms=spec.get("timeout_ms") or 10_000,
            batch_size=spec.get("batch_size") or 32,
        )
        _REMOTE.put(cache_key, found)
    return found
