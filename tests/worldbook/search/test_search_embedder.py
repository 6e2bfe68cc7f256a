"""HashingEmbedder: stable, normalised, and closer for texts that share words or characters."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from console.embedding.hashing import HashingEmbedder, hashing_features
from console.embedding.protocol import Embedder, cosine

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_protocol_and_version():
    embedder = HashingEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.embedding_version == "hash-ngram-v1-384"
    assert embedder.dimensions == 384
    [vector] = embedder.embed(["copper key"])
    assert len(vector) == 384
    assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0)


def test_empty_and_punctuation_only_texts_are_zero_vectors():
    vectors = HashingEmbedder().embed(["", "  ...!!"])
    assert all(v == 0.0 for vector in vectors for v in vector)


def test_features_cover_cjk_grams_and_latin_words():
    features = hashing_features("Gate 铜钥匙")
    assert {"w:gate", "g3:#ga", "g3:te#", "c1:铜", "c2:铜钥", "c2:钥匙"} <= set(features)


def test_similar_english_texts_score_higher_than_unrelated_ones():
    embed = HashingEmbedder().embed
    query, near, far = embed(
        [
            "the copper key opens the side gate",
            "Only the copper key can open the gate on the side.",
            "Steam engines power the northern factories at night.",
        ]
    )
    assert cosine(query, near) > cosine(query, far) + 0.2


def test_similar_chinese_texts_score_higher_than_unrelated_ones():
    embed = HashingEmbedder().embed
    query, near, far = embed(
        ["我把铜钥匙递给守卫", "铜钥匙只能开启灰港城门的侧门", "灰港夜晚依靠煤气灯照明"]
    )
    assert cosine(query, near) > cosine(query, far)
    assert cosine(query, near) > 0.1


def test_vectors_are_identical_across_processes():
    code = (
        "from console.embedding.hashing import HashingEmbedder;"
        "print(repr(HashingEmbedder().embed(['铜钥匙 copper key'])[0][:40]))"
    )
    here = repr(HashingEmbedder().embed(["铜钥匙 copper key"])[0][:40])
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            cwd=REPO_ROOT,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert outputs == {here}


@given(st.lists(st.text(max_size=80), max_size=5))
def test_every_vector_is_unit_or_zero(texts):
    for vector in HashingEmbedder().embed(texts):
        norm = math.sqrt(sum(v * v for v in vector))
        assert norm == 0.0 or math.isclose(norm, 1.0, rel_tol=1e-9)
