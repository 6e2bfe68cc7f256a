"""The vector side of hybrid recall runs the embedder memory's recall runs: the sentence model
by default, an OpenAI-compatible ``/v1/embeddings`` endpoint when ``WORLDBOOK_EMBEDDER``
names one, and a failing endpoint costs the vector side only (``degraded``), never the
request."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from console.embedding import choose, minilm
from memory.recall.embedder import local_embedder
from tests.worldbook.api.wb_api_helpers import book, create, entry
from worldbook import indexing
from worldbook.models import BookIndex

pytestmark = pytest.mark.django_db

# No word in common with the query below: only an embedder of meaning relates them.
WOLVES = entry("wolves", "Wolves howl in winter forests.", keys=["wolf pack"])
LORE = book(
    "Lore",
    WOLVES,
    entry("coins", "Copper coins buy passage on ferries.", keys=["copper"]),
    entry("harbour", "The harbour master keeps the tide tables.", keys=["tide"]),
)
QUERY = "canines calling out amid snowy woods"


def _indexed(api) -> str:
    book_id = create(api, LORE)["book_id"]
    assert api.post(f"/v1/books/{book_id}/index", {}, format="json").status_code == 202
    indexing.run_build(BookIndex.objects.get(book_id=book_id).pk)
    return book_id


def _select(api, book_id: str) -> dict:
    body = {
        "books": [{"book_id": book_id}],
        "query": QUERY,
        "strategy": "hybrid",
        "hybrid_threshold": 0.25,
        "decisions": "selected",
    }
    res = api.post("/v1/context/select", body, format="json")
    assert res.status_code == 200, res.content
    return res.json()


def test_the_worldbook_embeds_with_recalls_sentence_model():
    version = indexing.default_embedder().embedding_version
    assert version == minilm.EMBEDDING_VERSION == local_embedder().embedding_version
    assert indexing.embedding_version() == version
    for choice in choose.CHOICES:
        assert choose.local_version(choice) == choose.local_embedder(choice).embedding_version


# What every turn of a character does to find its books' ready indexes.
PROBE = """
import django
django.setup()
from console.embedding import choose, minilm
from worldbook import indexing
print(indexing.embedding_version(), bool(minilm._loaded))
"""


def test_knowing_the_embedding_version_loads_no_model():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-2:] == [minilm.EMBEDDING_VERSION, "False"]


def test_hybrid_recall_finds_an_entry_by_meaning(api):
    book_id = _indexed(api)
    index = BookIndex.objects.get(book_id=book_id)
    assert index.embedding_version == minilm.EMBEDDING_VERSION and index.status == "ready"
    answer = _select(api, book_id)
    assert [(b["entry_id"], b["reason"]) for b in answer["blocks"]] == [("wolves", "hybrid")]
    assert answer["degraded"] == []
    found = api.post(
        "/v1/search",
        {"query": QUERY, "books": [{"book_id": book_id}], "mode": "vector", "limit": 3},
        format="json",
    ).json()["results"]
    assert found[0]["entry_id"] == "wolves"


def _endpoint(llm, **extra) -> str:
    return json.dumps(
        {"provider": "openai_compatible", "base_url": llm.base_url, "model": "embed-wb", **extra}
    )


def test_an_endpoint_named_by_the_setting_embeds_index_and_query(api, llm, settings):
    settings.WORLDBOOK_EMBEDDER = _endpoint(llm)
    version = indexing.default_embedder().embedding_version
    assert version.startswith("openai:") and version.endswith("embed-wb")
    book_id = _indexed(api)
    assert BookIndex.objects.get(book_id=book_id).embedding_version == version
    built = len(llm.embedding_requests)
    assert built and all(r["dimensions"] == 384 for r in llm.embedding_requests)
    assert _select(api, book_id)["degraded"] == []
    assert len(llm.embedding_requests) == built + 1  # the query's vector

    llm.embedding_status = 503
    answer = _select(api, book_id)
    assert [n["code"] for n in answer["degraded"]] == ["vector_unavailable"]
    res = api.post(
        "/v1/search",
        {"query": QUERY, "books": [{"book_id": book_id}], "mode": "vector"},
        format="json",
    )
    assert res.status_code == 503 and res.json()["error"]["code"] == "vector_unavailable"


def test_a_setting_that_names_no_embedder_is_refused(settings, llm):
    settings.WORLDBOOK_EMBEDDER = "word2vec"
    with pytest.raises(ImproperlyConfigured):
        indexing.default_embedder()
    settings.WORLDBOOK_EMBEDDER = _endpoint(llm, dimensions=1536)
    with pytest.raises(ImproperlyConfigured, match="384"):
        indexing.default_embedder()
    settings.WORLDBOOK_EMBEDDER = "hashing"
    assert indexing.default_embedder().embedding_version == "hash-ngram-v1-384"
