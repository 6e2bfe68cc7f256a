"""Recall with the multilingual e5 embedder (``RECALL_EMBEDDER=e5``): each row records the
model that made its vector, a change of model moves the index over in the background job
(the console's jobs page shows how far it is), and a question in Chinese is embedded as a
query and finds its passage by meaning."""

from __future__ import annotations

import pytest
from django.test import Client

from console.embedding import e5, minilm
from memory.models import RecallItem
from memory.recall import indexing
from memory.recall.search import RecallQuery, recall
from tests.memory.test_recall import _conversation

pytestmark = pytest.mark.django_db(transaction=True)

LINES = [
    ("user", "我上周在海边的小镇买了一只白色的小猫。"),
    ("assistant", "真好！它叫什么名字？"),
    ("user", "它叫雪球，每天早上都要吃鱼。"),
    ("assistant", "雪球听起来是个可爱的名字。"),
    ("user", "明天我要去图书馆还书。"),
    ("assistant", "别忘了带借书证。"),
]


def _embedders() -> set[str]:
    return set(RecallItem.objects.values_list("embedder", flat=True))


def test_a_change_to_e5_moves_the_index_and_shows_its_progress(
    tenant, player, character, operator_user, monkeypatch
):
    monkeypatch.setenv("RECALL_EMBEDDER", "minilm")
    _conversation(tenant, player, character, LINES)
    assert _embedders() == {minilm.EMBEDDING_VERSION}
    monkeypatch.setenv("RECALL_EMBEDDER", "e5")
    before = indexing.progress(tenant)
    assert before["current"] == e5.EMBEDDING_VERSION
    assert before["done"] == 0 and before["left"] == before["chunks"] == len(LINES)
    console = Client()
    console.force_login(operator_user)
    page = console.get("/console/memory/jobs/").content.decode()
    assert f"0 of {len(LINES)} chunks done" in page and e5.EMBEDDING_VERSION in page

    assert indexing.rebuild_stale() == 1
    assert _embedders() == {e5.EMBEDDING_VERSION}
    after = indexing.progress(tenant)
    assert after["left"] == 0 and after["percent"] == 100.0
    page = console.get("/console/memory/jobs/").content.decode()
    assert f"All {len(LINES)} chunks are on it" in page


def test_a_chinese_question_finds_its_answer_by_meaning(tenant, player, character, monkeypatch):
    monkeypatch.setenv("RECALL_EMBEDDER", "e5")
    _conversation(tenant, player, character, LINES)
    found = recall(tenant, player, RecallQuery("宠物的名字是什么？", k=1))
    assert not found["degraded"]
    assert "雪球" in found["items"][0]["text"]
