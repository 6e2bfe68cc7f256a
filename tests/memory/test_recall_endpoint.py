"""Recall over a tenant's OpenAI-compatible ``/v1/embeddings`` endpoint (the scripted
server's): the client (batches, order, key, dimensions, every failure a clear code), the
settings checked field by field, indexing and recall with the endpoint's vectors, the
rebuild when the embedder changes, and words-only recall marked ``degraded`` while the
endpoint fails, healed by the sweep once it is back."""

from __future__ import annotations

import pytest

from console.embedding.openai_embedder import EmbeddingUnavailable, OpenAIEmbedder, version_of
from memory import services as message_store
from memory.configs.services import put_settings
from memory.errors import MemoryInvalid
from memory.models import RecallItem
from memory.recall import indexing
from memory.recall.embedder import local_embedder, recall_embedder
from memory.recall.search import RecallQuery, recall

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_client_batches_orders_and_sends_the_key(llm):
    embedder = OpenAIEmbedder(llm.base_url, "embed-small", api_key="sk-test", batch_size=2)
    vectors = embedder.embed(["the copper key", "", "a lighthouse", "the copper key"])
    assert len(vectors) == 4 and embedder.dimensions == 64
    assert vectors[0] == vectors[3] and vectors[0] != vectors[2]
    assert abs(sum(x * x for x in vectors[2]) - 1.0) < 1e-6
    sent = llm.embedding_requests
    assert [len(r["input"]) for r in sent] == [2, 2]
    assert sent[0]["input"][1] == " " and sent[0]["model"] == "embed-small"
    assert sent[0]["authorization"] == "Bearer sk-test"
    sized = OpenAIEmbedder(llm.base_url, "embed-small", dimensions=16)
    assert len(sized.embed(["x"])[0]) == 16 and llm.embedding_requests[-1]["dimensions"] == 16
    assert sized.embedding_version != embedder.embedding_version
    assert len(version_of("http://h/v1", "m" * 300, None)) <= 100


def test_every_failure_is_embedding_unavailable(llm):
    llm.embedding_status = 503
    with pytest.raises(EmbeddingUnavailable) as caught:
        OpenAIEmbedder(llm.base_url, "m").embed(["x"])
    assert caught.value.code == "embedding_http_error"
    with pytest.raises(EmbeddingUnavailable) as caught:
        OpenAIEmbedder("http://127.0.0.1:9/v1", "m", timeout_ms=1000).embed(["x"])
    assert caught.value.code in ("embedding_unreachable", "embedding_timeout")
    llm.embedding_status = 200
    with pytest.raises(EmbeddingUnavailable) as caught:
        OpenAIEmbedder(llm.base_url + "/chat", "m").embed(["x"])  # not an embeddings answer
    assert caught.value.code in ("embedding_http_error", "embedding_malformed")


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"provider": "local", "base_url": "http://h/v1", "model": "m"}, "embedder.provider"),
        ({"base_url": "ftp://h", "model": "m"}, "embedder.base_url"),
        ({"base_url": "http://h/v1", "model": ""}, "embedder.model"),
        ({"base_url": "http://h/v1", "model": "m", "api_key_env": "sk-raw-key"},
         "embedder.api_key_env"),
        ({"base_url": "http://h/v1", "model": "m", "dimensions": 0}, "embedder.dimensions"),
        ({"base_url": "http://h/v1", "model": "m", "timeout_ms": 10}, "embedder.timeout_ms"),
        ({"base_url": "http://h/v1", "model": "m", "surprise": 1}, "embedder.surprise"),
    ],
)  # fmt: skip
def test_the_endpoint_settings_are_checked_by_field(tenant, bad, field):
    data = {"provider": "openai_compatible"} | bad
    with pytest.raises(MemoryInvalid) as caught:
        put_settings(tenant, {"embedder": data})
    assert caught.value.details["field"] == field


def _endpoint(tenant, llm, **extra):
    put_settings(
        tenant,
        {"embedder": {"provider": "openai_compatible", "base_url": llm.base_url,
                      "model": "embed-small", **extra}},
    )  # fmt: skip


def _index(tenant, player, conversation, *lines):
    for line in lines:
        message_store.save_message(tenant, conversation.session_id, role="user", content=line)
    return indexing.index_messages(
        tenant,
        session_id=conversation.session_id,
        player_id=player.pk,
        character_id=str(conversation.character_id),
        conversation_id=conversation.pk,
    )


LINES = ["The copper key opens the side gate.", "We had soup at the harbour.", "Good night."]


def test_indexing_and_recall_use_the_tenants_endpoint(tenant, player, conversation, llm):
    _endpoint(tenant, llm)
    version = recall_embedder(tenant).embedding_version
    assert version.startswith("openai:") and version != local_embedder().embedding_version
    assert _index(tenant, player, conversation, *LINES) == 3
    assert set(RecallItem.objects.values_list("embedder", flat=True)) == {version}
    found = recall(tenant, player, RecallQuery("copper key gate", k=3))
    assert found["degraded"] is False
    assert "copper key" in found["items"][0]["text"]
    assert llm.embedding_requests  # the query went to the endpoint too


def test_a_changed_embedder_rebuilds_the_index_in_the_background(tenant, player, conversation, llm):
    _index(tenant, player, conversation, *LINES)
    local = local_embedder().embedding_version
    assert set(RecallItem.objects.values_list("embedder", flat=True)) == {local}
    _endpoint(tenant, llm)
    mixed = recall(tenant, player, RecallQuery("copper key", k=3))  # old rows: words only
    assert mixed["items"] and "copper key" in mixed["items"][0]["text"]
    assert indexing.rebuild_stale() == 1
    version = recall_embedder(tenant).embedding_version
    assert set(RecallItem.objects.values_list("embedder", flat=True)) == {version}
    assert indexing.rebuild_stale() == 0


def test_the_sweep_lists_each_tenant_and_embedder_once(tenant, player, conversation, llm):
    from roleplay.models import Conversation

    _index(tenant, player, conversation, *LINES)
    _endpoint(tenant, llm)
    later = Conversation.objects.create(
        tenant=tenant, player=player, character_id=conversation.character_id
    )
    _index(tenant, player, later, "A line of another conversation, indexed by the endpoint.")
    pairs = set(RecallItem.objects.values_list("tenant_id", "embedder"))
    assert len(pairs) == 2
    assert sorted(indexing.embedders_in_use()) == sorted(pairs)


def test_a_failing_endpoint_degrades_to_words_and_heals(tenant, player, conversation, llm):
    _endpoint(tenant, llm, timeout_ms=1000)
    llm.embedding_status = 500
    assert _index(tenant, player, conversation, *LINES) == 3  # indexed, without vectors
    assert set(RecallItem.objects.values_list("embedder", flat=True)) == {indexing.UNAVAILABLE}
    assert not RecallItem.objects.exclude(embedding=None).exists()
    found = recall(tenant, player, RecallQuery("copper key", k=3))
    assert found["degraded"] is True and "copper key" in found["items"][0]["text"]
    assert indexing.rebuild_stale() == 0  # still down: not asked for the whole conversation
    llm.embedding_status = 200
    assert indexing.rebuild_stale() == 1
    assert not RecallItem.objects.filter(embedding=None).exists()
    assert recall(tenant, player, RecallQuery("copper key", k=3))["degraded"] is False


def test_the_api_says_degraded_while_the_endpoint_fails(tenant, player, conversation, llm, api):
    _index(tenant, player, conversation, *LINES)
    _endpoint(tenant, llm)
    llm.embedding_status = 502
    response = api.post(
        f"/api/v1/players/{player.pk}/memory/recall", {"query": "soup harbour"}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["degraded"] is True and "soup" in body["items"][0]["text"]
