"""Recall's embedder. A tenant whose memory settings name an ``embedder`` uses that
OpenAI-compatible ``/v1/embeddings`` endpoint (``console.embedding.openai_embedder``; the key
read from the environment variable it names). Otherwise the real sentence model when it is
installed (all-MiniLM-L6-v2, run with numpy: ``console.embedding.minilm``), else the offline
hashing embedder; ``RECALL_EMBEDDER=hashing`` keeps the hashing one. The choice is the
shared kernel's (``console.embedding.choose``), the worldbook's too.
Each index row records the embedder it was made with, and a message indexed under another
embedder is indexed again (``memory.recall.indexing.rebuild_stale``).
"""

from __future__ import annotations

import os

from console.embedding import choose
from console.embedding.openai_embedder import EmbeddingUnavailable
from memory.configs.selectors import config_for

__all__ = ["EmbeddingUnavailable", "local_embedder", "recall_embedder"]


def local_embedder():
    """The deployment's own embedder: the sentence model, else the hashing one."""
    return choose.local_embedder(os.environ.get("RECALL_EMBEDDER", choose.MINILM))


def recall_embedder(tenant=None):
    """``tenant``'s embedder (the deployment's own without one, or when it names none)."""
    spec = config_for(tenant).embedder if tenant is not None else None
    return choose.remote_embedder(spec) if spec else local_embedder()
