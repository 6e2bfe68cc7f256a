"""A BERT encoder's forward pass as an ONNX graph, run by ONNX Runtime.

The graph is the one :class:`console.embedding.minilm.MiniLMEmbedder` computes with numpy
(embeddings, ``layers`` encoder layers, the mean of the token states under the attention
mask, L2-normalised), built in memory from the same weights: no exported model file, no
deep-learning framework. ONNX Runtime fuses the layer norms, the GELU and the attention and
runs its own matrix kernels, several times faster than numpy on short chat texts, where
numpy's per-operation overhead dominates. The vectors are the numpy pass's to within float
rounding (a test compares them), so they share its ``embedding_version``.

:func:`encoder` returns None when ``onnxruntime`` or ``onnx`` is not installed (or the graph
cannot be loaded here): the caller keeps numpy. Building the graph costs about a second (most
of it importing ``onnx``), so the built model is kept in ``$EMBEDDER_CACHE_DIR`` (the entry
points set it to ``var/cache/embedders``) under a name made from the caller's ``cache_key``
(the weights' file and :data:`GRAPH_VERSION`); a later process loads the file instead. It
runs ``cores.threads()`` threads (one unless an operator says otherwise, as for BLAS and the
e5 engine), which never spin waiting for work.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from console.embedding.cores import threads

logger = logging.getLogger(__name__)

OPSET = 18  # LayerNormalization; every Reduce takes its axes as an input
GRAPH_VERSION = "1"  # of :func:`_graph`: a change names new cache files
CACHE_ENV = "EMBEDDER_CACHE_DIR"


class Encoder:
    """``run(ids, mask)``: the pooled, normalised vectors of one batch (int64 ids, float32
    mask, both ``[batch, length]``)."""

    def __init__(self, session) -> None:
        self._session = session

    def run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        (vectors,) = self._session.run(None, {"ids": ids, "mask": mask})
        return vectors


def encoder(
    weights: Callable[[], tuple],
    heads: int,
    eps: float,
    cache_key: str = "",
    *,
    int8: bool = False,
) -> Encoder | None:
    """An :class:`Encoder`, or None without ONNX Runtime. ``weights()`` gives (word,
    position, token type, embedding norm, layers) laid out as ``minilm`` prepares them,
    asked for only when the graph is built; ``cache_key`` names them (empty: no cache).
    ``int8``: the dense layers' weights in 8 bits (:func:`_int8`)."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None

    def build() -> bytes:
        word, position, token_type, norm, layers = weights()
        model = _graph(word, position, token_type, norm, layers, heads, eps)
        return _int8(model) if int8 else model

    if int8 and cache_key:
        cache_key = f"{cache_key}:int8"
    try:
        model = _cached(cache_key, build)
        try:
            session = _session(ort, model)
        except Exception:
            if not isinstance(model, str):
                raise
            Path(model).unlink(missing_ok=True)  # a damaged file: built again
            session = _session(ort, _cached(cache_key, build))
    except Exception:  # an odd build of either package: numpy still works
        logger.warning("ONNX Runtime cannot run the embedder here; numpy runs it", exc_info=True)
        return None
    return Encoder(session)


def _session(ort, model: bytes | str):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads()
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def _cached(cache_key: str, build: Callable[[], bytes]) -> bytes | str:
    """The model's file when it was kept before, else the model built (and kept)."""
    folder = os.environ.get(CACHE_ENV, "")
    if not cache_key or not folder:
        return build()
    name = hashlib.sha256(f"{GRAPH_VERSION}\n{cache_key}".encode()).hexdigest()[:24]
    path = Path(folder) / f"encoder-{name}.onnx"
    if path.is_file():
        return str(path)
    model = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(model)
        partial.chmod(0o600)
        os.replace(partial, path)  # whole or not at all, whoever writes it first
    except OSError:
        logger.warning("cannot keep the embedder's graph in %s", folder, exc_info=True)
    return model


def _int8(model: bytes) -> bytes:
    """The graph with the weights of its dense layers (the ``….mm`` products) quantized to
    8 bits per output channel (ONNX Runtime's dynamic quantization: the activations are
    quantized as each product runs). The attention's own products, of two activations,
    stay in floats: quantizing them cost far more accuracy than they save. The weights use
    7 of their 8 bits (``reduce_range``), so processors without VNNI instructions, whose
    8-bit products add up in 16 bits, cannot saturate: machines differ by float rounding
    only. About twice as fast as the float graph on short texts, at a cosine of about
    0.99 to its vectors."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    proto = onnx.load_from_string(model)
    dense = [n.name for n in proto.graph.node if n.op_type == "MatMul" and n.name.endswith(".mm")]
    with tempfile.TemporaryDirectory(prefix="encoder-int8-") as folder:
        out = Path(folder) / "int8.onnx"
        quantize_dynamic(
            proto, out, per_channel=True, reduce_range=True, weight_type=QuantType.QInt8,
            nodes_to_quantize=dense,
        )  # fmt: skip
        return out.read_bytes()


def _graph(word, position, token_type, norm, layers, heads, eps) -> bytes:
    from onnx import TensorProto, helper, numpy_helper

    dims = word.shape[1]
    head = dims // heads
    weights: list = []
    nodes: list = []

    def const(name: str, value) -> str:
        weights.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op: str, inputs: list[str], name: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def layer_norm(x: str, weights: tuple, name: str) -> str:
        g, b = const(f"{name}.g", weights[0]), const(f"{name}.b", weights[1])
        return node("LayerNormalization", [x, g, b], name, axis=-1, epsilon=eps)

    def dense(x: str, w, b, name: str) -> str:
        product = node("MatMul", [x, const(f"{name}.w", w)], f"{name}.mm")
        return node("Add", [product, const(f"{name}.bias", b)], name)

    # embeddings: word + position (0..length-1) + token type 0, normalised
    shape = node("Shape", ["ids"], "shape")
    length = node("Gather", [shape, const("one", np.int64(1))], "length")
    positions = node("Range", [const("zero", np.int64(0)), length, "one"], "positions")
    x = node("Gather", [const("word", word), "ids"], "words")
    x = node("Add", [x, node("Gather", [const("position", position), positions], "pos")], "e1")
    x = node("Add", [x, const("type", token_type)], "e2")
    x = layer_norm(x, norm, "embed")
    # the attention's additive mask, [batch, 1, 1, length]
    unmasked = node("Sub", [const("onef", np.float32(1.0)), "mask"], "unmasked")
    scaled = node("Mul", [unmasked, const("neg", np.float32(-1e4))], "masked")
    bias = node("Unsqueeze", [scaled, const("axes12", np.array([1, 2], np.int64))], "bias")
    split_heads = const("split", np.array([0, 0, 3, heads, head], np.int64))
    merge_heads = const("merge", np.array([0, 0, dims], np.int64))
    scale = const("scale", np.float32(1.0 / np.sqrt(head)))
    for i, layer in enumerate(layers):
        p = f"l{i}"
        qkv = node("Reshape", [dense(x, layer["qkv"], layer["qkv_b"], f"{p}.qkv"), split_heads],
                   f"{p}.heads")  # fmt: skip
        qkv = node("Transpose", [qkv], f"{p}.t", perm=[2, 0, 3, 1, 4])  # [3, b, h, len, d]
        q, k, v = (node("Gather", [qkv, const(f"{p}.i{j}", np.int64(j))], f"{p}.{n}")
                   for j, n in enumerate("qkv"))  # fmt: skip
        kt = node("Transpose", [k], f"{p}.kt", perm=[0, 1, 3, 2])
        scores = node("Mul", [node("MatMul", [q, kt], f"{p}.qk"), scale], f"{p}.scaled")
        scores = node("Softmax", [node("Add", [scores, bias], f"{p}.biased")], f"{p}.p", axis=-1)
        context = node("Transpose", [node("MatMul", [scores, v], f"{p}.ctx")], f"{p}.ct",
                       perm=[0, 2, 1, 3])  # fmt: skip
        context = node("Reshape", [context, merge_heads], f"{p}.merged")
        attended = node("Add", [x, dense(context, layer["out"], layer["out_b"], f"{p}.out")],
                        f"{p}.res1")  # fmt: skip
        x = layer_norm(attended, layer["norm1"], f"{p}.n1")
        x = layer_norm(node("Add", [x, _ffn(node, const, dense, x, layer, p)], f"{p}.res2"),
                       layer["norm2"], f"{p}.n2")  # fmt: skip
    # mean of the token states under the mask, then L2-normalised
    weights3 = node("Unsqueeze", ["mask", const("axis2", np.array([2], np.int64))], "mask3")
    axis1 = const("axis1", np.array([1], np.int64))
    total = node("ReduceSum", [node("Mul", [x, weights3], "kept"), axis1], "total", keepdims=0)
    count = node("ReduceSum", ["mask", axis1], "count", keepdims=1)
    count = node("Max", [count, const("tiny", np.float32(1e-9))], "count1")
    pooled = node("Div", [total, count], "pooled")
    size = node("ReduceL2", [pooled, axis1], "size", keepdims=1)
    size = node("Max", [size, const("tiny2", np.float32(1e-12))], "size1")
    node("Div", [pooled, size], "vectors")
    graph = helper.make_graph(
        nodes,
        "encoder",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("vectors", TensorProto.FLOAT, ["batch", dims])],
        initializer=weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model.SerializeToString()


def _ffn(node, const, dense, x: str, layer: dict, p: str) -> str:
    """The feed-forward block: up, GELU (the erf form, which ONNX Runtime fuses), down."""
    up = dense(x, layer["up"], layer["up_b"], f"{p}.up")
    erf = node("Erf", [node("Mul", [up, const(f"{p}.r2", np.float32(0.7071067811865476))],
                            f"{p}.u")], f"{p}.erf")  # fmt: skip
    half = node("Mul", [up, const(f"{p}.half", np.float32(0.5))], f"{p}.h")
    gelu = node("Mul", [half, node("Add", [erf, "onef"], f"{p}.e1")], f"{p}.gelu")
    return dense(gelu, layer["down"], layer["down_b"], f"{p}.down")
