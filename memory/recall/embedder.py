"""Recall's embedder: the real sentence model when it is installed (all-MiniLM-L6-v2, run
with numpy: ``worldbook.engine.minilm``), else the offline hashing embedder the worldbook
uses. ``RECALL_EMBEDDER=hashing`` keeps the hashing one. Each index row records the
embedder it was made with, and a message indexed under another embedder is indexed again.
"""

from __future__ import annotations

import os

from worldbook.engine import minilm
from worldbook.indexing import default_embedder


def recall_embedder():
    if os.environ.get("RECALL_EMBEDDER", "minilm") != "hashing":
        model = minilm.load()
        if model is not None:
            return model
    return default_embedder()
