"""``/api/v1/conversations/{id}/memory-documents/{slot}``: the seed's read and compare-and-set
write over REST, against the real database (races commit: ``transactional_db``)."""

from __future__ import annotations

from collections import Counter

import pytest

from memory.engine.documents import MAX_DEPTH, MAX_DOCUMENT_BYTES, serialized_size
from memory.models import MemoryDocument, MemoryDocumentRevision
from tests.api.helpers import assert_error
from tests.races import race

N = 20


def _url(conversation, slot="default", rest=""):
    return f"/api/v1/conversations/{conversation.id}/memory-documents/{slot}/{rest}"


def _put(client, conversation, expected, memory, slot="default", **headers):
    body = {"expectedRevision": expected, "memory": memory}
    return client.put(_url(conversation, slot), body, format="json", **headers)


@pytest.mark.django_db
def test_read_write_conflict_and_history(api, conversation):
    assert api.get(_url(conversation)).json() == {"revision": 0, "memory": None}
    res = _put(api, conversation, 0, {"scene": "城门", "keyHolder": "用户"})
    assert res.status_code == 200 and res.json() == {"revision": 1}
    res = _put(api, conversation, 1, {"scene": "城门", "keyHolder": "守卫"})
    assert res.json() == {"revision": 2}
    got = api.get(_url(conversation)).json()
    assert got == {"revision": 2, "memory": {"scene": "城门", "keyHolder": "守卫"}}
    error = assert_error(_put(api, conversation, 1, {"late": True}), 409, "revision_conflict")
    assert error["details"]["current_revision"] == 2
    history = api.get(_url(conversation, rest="history")).json()["results"]
    assert [(h["revision"], h["origin"]) for h in history] == [(2, "api"), (1, "api")]
    slots = api.get(f"/api/v1/conversations/{conversation.id}/memory-documents/").json()["results"]
    assert [(s["slot"], s["revision"]) for s in slots] == [("default", 2)]


def _sized(size):
    return {"a": "x" * (size - serialized_size({"a": ""}))}


def _nested(levels):
    value: dict = {}
    for _ in range(levels - 1):
        value = {"n": value}
    return value


@pytest.mark.django_db
def test_the_limits_over_rest(api, conversation):
    assert _put(api, conversation, 0, _sized(MAX_DOCUMENT_BYTES)).json() == {"revision": 1}
    assert_error(
        _put(api, conversation, 1, _sized(MAX_DOCUMENT_BYTES + 1)), 422, "memory_too_large"
    )
    assert _put(api, conversation, 1, _nested(MAX_DEPTH)).json() == {"revision": 2}
    assert_error(_put(api, conversation, 2, _nested(MAX_DEPTH + 1)), 422, "memory_too_deep")
    assert api.get(_url(conversation)).json()["revision"] == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"expectedRevision": 0}, 400, "validation_error"),
        ({"memory": {}}, 400, "validation_error"),
        ({"expectedRevision": 0, "memory": {}, "merge": True}, 400, "validation_error"),
        ([1], 400, "validation_error"),
        ({"expectedRevision": 0, "memory": None}, 422, "memory_not_object"),
        ({"expectedRevision": 0, "memory": [1, 2]}, 422, "memory_not_object"),
        ({"expectedRevision": "0", "memory": {}}, 422, "invalid_revision"),
        ({"expectedRevision": -1, "memory": {}}, 422, "invalid_revision"),
        ({"expectedRevision": 2**53, "memory": {}}, 422, "invalid_revision"),
        ({"expectedRevision": 0, "memory": {"a": "\u0000"}}, 422, "invalid_text"),
    ],
)
def test_bad_bodies_are_4xx_and_write_nothing(api, conversation, body, status, code):
    res = api.put(_url(conversation), body, format="json")
    assert_error(res, status, code)
    assert MemoryDocument.objects.count() == 0


@pytest.mark.django_db
def test_a_bad_slot_is_422_and_another_tenants_conversation_is_404(
    api, conversation, api_client_for, other_tenant
):
    assert_error(api.get(_url(conversation, "bad slot!")), 422, "invalid_slot")
    assert_error(_put(api, conversation, 0, {}, slot="-x"), 422, "invalid_slot")
    _put(api, conversation, 0, {"mine": True})
    stranger = api_client_for(other_tenant)
    for res in (
        stranger.get(_url(conversation)),
        _put(stranger, conversation, 1, {"theirs": True}),
        stranger.get(_url(conversation, rest="history")),
    ):
        assert res.status_code == 404
    assert api.get(_url(conversation)).json() == {"revision": 1, "memory": {"mine": True}}


@pytest.mark.django_db
def test_a_token_without_the_play_scope_cannot_read_or_write(api_client_for, tenant, conversation):
    content_only = api_client_for(tenant, scopes=["content"])
    assert content_only.get(_url(conversation)).status_code == 403
    assert _put(content_only, conversation, 0, {}).status_code == 403
    assert MemoryDocument.objects.count() == 0


@pytest.mark.django_db
def test_an_idempotency_key_replays_the_write(api, conversation):
    first = _put(api, conversation, 0, {"v": 1}, HTTP_IDEMPOTENCY_KEY="k1")
    again = _put(api, conversation, 0, {"v": 1}, HTTP_IDEMPOTENCY_KEY="k1")
    assert first.json() == again.json() == {"revision": 1}
    assert MemoryDocumentRevision.objects.count() == 1
    assert_error(
        _put(api, conversation, 0, {"v": 2}, HTTP_IDEMPOTENCY_KEY="k1"), 409, "idempotency_conflict"
    )


@pytest.mark.django_db
def test_deleting_the_conversation_deletes_its_documents(api, conversation):
    _put(api, conversation, 0, {"v": 1})
    assert api.delete(f"/api/v1/conversations/{conversation.id}/").status_code == 204
    assert MemoryDocument.objects.count() == MemoryDocumentRevision.objects.count() == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("start", [0, 3])
def test_twenty_writers_on_one_revision_make_one_winner(
    api_client_for, tenant, conversation, start
):
    clients = [api_client_for(tenant) for _ in range(N)]
    for revision in range(start):
        _put(clients[0], conversation, revision, {"setup": revision})

    def write(client, i):
        res = _put(client, conversation, start, {"writer": i})
        return res.status_code, res.json()

    results = race(clients, write)
    assert Counter(status for status, _ in results) == {200: 1, 409: N - 1}
    winner = next(i for i, (status, _) in enumerate(results) if status == 200)
    for status, body in results:
        if status == 409:
            assert body["error"]["code"] == "revision_conflict"
            assert body["error"]["details"]["current_revision"] == start + 1
    assert clients[0].get(_url(conversation)).json() == {
        "revision": start + 1,
        "memory": {"writer": winner},
    }
    assert MemoryDocumentRevision.objects.filter(revision=start + 1).count() == 1
    assert MemoryDocument.objects.count() == 1
