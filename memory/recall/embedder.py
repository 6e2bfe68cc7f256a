"""Recall's embedder. A tenant whose memory settings name an ``embedder`` uses that
OpenAI-compatible ``/v1/embeddings`` endpoint (``console.embedding.openai_embedder``; the key
read from the environment variable it names). Otherwise the local sentence model that
``RECALL_EMBEDDER`` names (``console.embedding.choose``, the worldbook's rule too):
``minilm`` (all-MiniLM-L6-v2, English, run on ONNX Runtime or numpy), ``e5`` (multilingual-e5-small,
4-bit, ``console.embedding.e5``) or ``hashing`` (the offline hashing embedder, also what
runs when no model is installed); unset, the kernel's default.
Each index row records the embedder it was made with, and a message indexed under another
embedder is indexed again (``memory.recall.indexing.rebuild_stale``).
"""

from __future__ import annotations

import os

from console.embedding import choose
from console.embedding.openai_embedder import EmbeddingUnavailable
from memory.configs.selectors import config_for

__all__ = ["EmbeddingUnavailable", "local_embedder", "recall_embedder", "recall_version"]


def _local_choice() -> str:
    """``RECALL_EMBEDDER`` (any case, blanks around), the kernel's default when unset."""
    return os.environ.get("RECALL_EMBEDDER", "").strip().lower() or choose.DEFAULT


def local_embedder():
    """The deployment's own embedder (``RECALL_EMBEDDER``): a sentence model, else the
    hashing one."""
    return choose.local_embedder(_local_choice())


def recall_embedder(tenant=None):
    """``tenant``'s embedder (the deployment's own without one, or when it names none)."""
    spec = config_for(tenant).embedder if tenant is not None else None
    return choose.remote_embedder(spec) if spec else local_embedder()


def recall_version(tenant) -> str:
    """The ``embedding_version`` of ``tenant``'s embedder, loading no model (a console page
    that only shows it)."""
    spec = config_for(tenant).embedder
    return choose.version_for(spec) if spec else choose.local_version(_local_choice())
