"""``minilm-int8``: MiniLM with 8-bit dense weights, a local choice of its own: its own
version (an index moves over when the choice changes), vectors close to the float graph's,
and the same behaviour as a sentence model (meaning near, batches do not change a text's
vector)."""

from __future__ import annotations

import math

import pytest

from console.embedding import choose, minilm, minilm_int8


@pytest.fixture(scope="module")
def models():
    int8, floats = choose.local_embedder(choose.MINILM_INT8), minilm.load()
    assert floats is not None and int8 is not floats
    return int8, floats


def _cos(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


TEXTS = [
    "What food does Kenji hate?",
    "Please, no blue cheese on my plate, I've never been able to eat it.",
    "The weather was grey again today.",
    "She finally told me her mentor retired last spring, the week before the trip.",
    "*nods*",
    "",
]


def test_it_is_a_choice_with_a_version_of_its_own(models):
    int8, _floats = models
    assert choose.parse_choice(" MiniLM-INT8 ") == choose.MINILM_INT8
    assert int8.embedding_version == minilm_int8.EMBEDDING_VERSION == minilm.INT8_VERSION
    assert choose.local_version(choose.MINILM_INT8) == minilm.INT8_VERSION
    assert minilm.INT8_VERSION != minilm.EMBEDDING_VERSION
    assert choose.local_embedder(choose.MINILM_INT8) is int8  # one per process


def test_its_vectors_are_normalised_and_close_to_the_float_graphs(models):
    int8, floats = models
    quantized, exact = int8.embed(TEXTS), floats.embed(TEXTS)
    assert [len(v) for v in quantized] == [minilm.DIMENSIONS] * len(TEXTS)
    assert all(math.isclose(_cos(v, v), 1.0, rel_tol=1e-4) for v in quantized)
    assert min(_cos(a, b) for a, b in zip(quantized, exact, strict=True)) > 0.95


def test_meaning_stays_near_and_a_batch_changes_nothing(models):
    int8, _floats = models
    question, answer, unrelated = int8.embed(TEXTS[:3])
    assert _cos(question, answer) > _cos(question, unrelated) + 0.2
    alone = int8.embed([TEXTS[3]])[0]
    batched = int8.embed([TEXTS[3], "A much longer sentence that pads the batch " * 5])[0]
    assert _cos(alone, batched) > 0.9999  # one text a run: its batch changes nothing


def test_recall_uses_it_when_the_deployment_names_it(monkeypatch):
    from memory.recall.embedder import recall_embedder

    monkeypatch.setenv("RECALL_EMBEDDER", "minilm-int8")
    assert recall_embedder().embedding_version == minilm.INT8_VERSION


def test_recall_weighs_its_cosines_as_minilms():
    from memory.engine import recall

    for query in ("where is the key?", "钥匙在哪里"):
        assert recall.vector_weight(minilm.INT8_VERSION, query) == recall.vector_weight(
            minilm.EMBEDDING_VERSION, query
        )
