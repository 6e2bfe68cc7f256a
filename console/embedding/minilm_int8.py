"""``minilm-int8``: all-MiniLM-L6-v2 with its dense layers' weights in 8 bits
(``minilm``'s ``int8`` runtime, ``bert_onnx._int8``), as a local model choice beside
``minilm`` and ``e5`` (``choose``).

About twice as fast as ``minilm`` on ONNX Runtime, for a worker that must index more
messages a second on few cores, at a small cost in what recall finds (``docs/memory.md``
has both measured). Its vectors carry a version of their own (:data:`EMBEDDING_VERSION`),
so an index moves over when the choice changes. It needs ONNX Runtime, as ``minilm``
does by default; without it the choice falls back to ``minilm``'s numpy runtime, whose
vectors carry ``minilm``'s version.
"""

from __future__ import annotations

from console.embedding import minilm

EMBEDDING_VERSION = minilm.INT8_VERSION
installed = minilm.installed


def load() -> minilm.MiniLMEmbedder | None:
    """The process's 8-bit MiniLM, loaded on first use; None when the model is not
    installed."""
    return minilm.load("int8")
