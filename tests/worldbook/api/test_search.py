"""``POST /v1/search``: lexical ranking (Chinese included), excerpts, modes without an index."""

from __future__ import annotations

import pytest

from tests.worldbook.api.wb_api_helpers import book, counts, create, entry, error

pytestmark = pytest.mark.django_db

FILLER = "灰港的雾气终年不散，码头工人在煤气灯下搬运货物。" * 60
GREYPORT = book(
    "灰港",
    entry("copper", FILLER + "铜钥匙只能开启灰港城门的侧门。" + FILLER, title="铜钥匙"),
    entry("guard", "守卫在放行前必须核对来访者的手令。", title="守卫"),
    entry("tower", "The lighthouse tower is closed at night.", title="Tower"),
    entry("copper-mine", "城外的铜矿已经废弃多年。", title="铜矿"),
)


def search(api, body):
    return api.post("/v1/search", body, format="json")


def test_lexical_search_in_chinese(api):
    book_id = create(api, GREYPORT)["book_id"]
    res = search(api, {"query": "铜钥匙", "books": [{"book_id": book_id}]})
    assert res.status_code == 200, res.content
    out = res.json()
    assert out["query"] == "铜钥匙" and out["mode"] == "lexical" and out["degraded"] == []
    hits = out["results"]
    assert hits[0]["entry_id"] == "copper"
    assert set(hits[0]) == {"book_id", "revision", "entry_id", "title", "score", "excerpt"}
    assert hits[0]["book_id"] == book_id and hits[0]["revision"] == 1
    assert hits[0]["title"] == "铜钥匙"
    # The excerpt is cut around the match, not the start of a 3,000-character entry.
    assert "铜钥匙" in hits[0]["excerpt"] and len(hits[0]["excerpt"]) <= 600
    assert "tower" not in {h["entry_id"] for h in hits}
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_every_excerpt_is_at_most_600_characters(api):
    long_entries = [entry(f"e{i}", ("lighthouse " * 200) + f"x{i}") for i in range(5)]
    book_id = create(api, book("long", *long_entries))["book_id"]
    out = search(api, {"query": "lighthouse", "books": [{"book_id": book_id}], "limit": 50})
    hits = out.json()["results"]
    assert len(hits) == 5 and all(0 < len(h["excerpt"]) <= 600 for h in hits)


def test_limit_and_several_books(api):
    first = create(api, book("a", *[entry(f"a{i}", "harbour fog") for i in range(8)]))["book_id"]
    second = create(api, book("b", *[entry(f"b{i}", "harbour fog") for i in range(8)]))["book_id"]
    body = {"query": "harbour", "books": [{"book_id": first}, {"book_id": second}], "limit": 12}
    hits = search(api, body).json()["results"]
    assert len(hits) == 12
    assert {h["book_id"] for h in hits} == {first, second}


def test_english_case_folding(api):
    book_id = create(api, GREYPORT)["book_id"]
    hits = search(api, {"query": "LIGHTHOUSE", "books": [{"book_id": book_id}]}).json()
    assert [h["entry_id"] for h in hits["results"]] == ["tower"]


def test_vector_search_without_an_index_is_409(api):
    book_id = create(api, GREYPORT)["book_id"]
    res = search(api, {"query": "铜钥匙", "books": [{"book_id": book_id}], "mode": "vector"})
    assert res.status_code == 409
    err = error(res)
    assert err["code"] == "index_not_ready"
    assert err["details"] == {"book_id": book_id, "revision": 1}


def test_hybrid_search_without_an_index_falls_back_to_lexical(api):
    book_id = create(api, GREYPORT)["book_id"]
    lexical = search(api, {"query": "铜钥匙", "books": [{"book_id": book_id}]}).json()
    body = {"query": "铜钥匙", "books": [{"book_id": book_id}], "mode": "hybrid"}
    hybrid = search(api, body).json()
    assert hybrid["degraded"][0]["code"] == "vector_index_not_ready"
    assert hybrid["degraded"][0]["book_id"] == book_id
    assert [h["entry_id"] for h in hybrid["results"]] == [h["entry_id"] for h in lexical["results"]]
    assert hybrid["results"][0]["score"] == 1.0  # normalised to the best lexical score


@pytest.mark.parametrize(
    ("patch", "needle"),
    [
        ({"mode": "semantic"}, "mode"),
        ({"limit": 0}, "limit"),
        ({"limit": 51}, "limit"),
        ({"query": ""}, "query"),
        ({"books": []}, "books"),
        ({"top_k": 3}, "top_k"),
    ],
)
def test_bad_search_requests_are_422(api, patch, needle):
    book_id = create(api)["book_id"]
    before = counts()
    res = search(api, {"query": "q", "books": [{"book_id": book_id}], **patch})
    assert res.status_code == 422 and needle in error(res)["message"]
    assert counts() == before


def test_a_book_listed_twice_is_422(api):
    book_id = create(api)["book_id"]
    refs = [{"book_id": book_id}, {"book_id": book_id.upper()}]
    res = search(api, {"query": "q", "books": refs})
    assert res.status_code == 422 and "twice" in error(res)["message"]


def test_search_missing_book_is_404(api):
    res = search(
        api, {"query": "q", "books": [{"book_id": "00000000-0000-0000-0000-000000000000"}]}
    )
    assert res.status_code == 404 and error(res)["code"] == "not_found"
