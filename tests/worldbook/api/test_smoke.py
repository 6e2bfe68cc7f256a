"""The seed's greyport walk-through, end to end through the HTTP API."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

GREYPORT = {
    "name": "灰港世界设定",
    "description": "演示：常驻世界规则与按铜钥匙触发的城门规则。",
    "entries": [
        {
            "id": "greyport-background",
            "title": "灰港基本设定",
            "content": "灰港是一座蒸汽城市，城内没有电力，夜晚依靠煤气灯照明。",
            "constant": True,
            "position": "before_character",
            "audience": ["actor"],
        },
        {
            "id": "copper-key",
            "title": "铜钥匙与城门守卫",
            "content": "铜钥匙只能开启灰港城门的侧门。守卫在放行前必须核对来访者的手令，不能仅凭钥匙放人。",  # noqa: E501
            "keys": ["铜钥匙", "城门"],
            "position": "before_character",
            "audience": ["actor"],
            "priority": 20,
        },
    ],
}


def test_create_select_publish(api):
    created = api.post("/v1/books", GREYPORT, format="json", HTTP_IDEMPOTENCY_KEY="greyport-v1")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["replayed"] is False
    book = body["books"][0]
    assert book["revision"] == 1 and book["import_report"] == {"format": "native", "entry_count": 2}
    replay = api.post("/v1/books", GREYPORT, format="json", HTTP_IDEMPOTENCY_KEY="greyport-v1")
    assert replay.status_code == 201 and replay.json()["replayed"] is True
    assert replay.json()["books"] == body["books"]
    other = api.post(
        "/v1/books", {**GREYPORT, "name": "x"}, format="json", HTTP_IDEMPOTENCY_KEY="greyport-v1"
    )
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"

    select = {
        "books": [{"book_id": book["book_id"], "revision": 1}],
        "query": "我把铜钥匙递给守卫。",
        "history": [],
        "state": {},
        "audience": "actor",
        "strategy": "rules",
        "scan_depth": 4,
        "token_budget": 1500,
        "seed": "example-turn-1",
        "template_vars": {"char": "守卫", "user": "旅人"},
    }
    res = api.post("/v1/context/select", select, format="json")
    assert res.status_code == 200, res.json()
    out = res.json()
    reasons = {b["entry_id"]: b["reason"] for b in out["blocks"]}
    assert reasons == {"greyport-background": "constant", "copper-key": "keyword"}
    key_block = next(b for b in out["blocks"] if b["entry_id"] == "copper-key")
    assert key_block["id"] == f"{book['book_id']}:1:copper-key"
    assert out["tokenizer"] == "cl100k_base" and out["token_count"] <= 1500
    assert len(out["decisions"]) == 2

    stale = api.post(
        f"/v1/books/{book['book_id']}/revisions",
        {**GREYPORT, "expected_revision": 1},
        format="json",
    )
    assert stale.status_code == 201 and stale.json()["revision"] == 2
    again = api.post(
        f"/v1/books/{book['book_id']}/revisions",
        {**GREYPORT, "expected_revision": 1},
        format="json",
    )
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "revision_conflict"
    assert again.json()["error"]["details"]["current_revision"] == 2
    assert api.get(f"/v1/books/{book['book_id']}/revisions/1").status_code == 200
    exported = api.get(f"/v1/books/{book['book_id']}/revisions/2/export?format=sillytavern")
    assert exported.status_code == 200 and "entries" in exported.json()


def test_unknown_field_is_422(api):
    bad = {**GREYPORT, "tenant_id": "x"}
    res = api.post("/v1/books", bad, format="json")
    assert res.status_code == 422
    assert "tenant_id" in str(res.json())
