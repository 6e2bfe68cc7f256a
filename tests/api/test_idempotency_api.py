"""Creates of the runtime API honour ``Idempotency-Key``: a retried create makes no second
row and answers as the first did; the same key with another body is a 409."""

from __future__ import annotations

import json

import pytest

from roleplay.models import Character
from tests.api.helpers import api_routes

pytestmark = pytest.mark.django_db


def post(api, body, key):
    return api.post("/api/v1/characters/", body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_retried_create_replays_the_first_answer(api):
    first = post(api, {"name": "Mira"}, "k-1")
    again = post(api, {"name": "Mira"}, "k-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert Character.objects.filter(name="Mira").count() == 1


def test_the_same_key_with_another_body_is_a_conflict(api):
    assert post(api, {"name": "Mira"}, "k-2").status_code == 201
    other = post(api, {"name": "Ada"}, "k-2")
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"
    assert not Character.objects.filter(name="Ada").exists()


def test_a_refused_create_does_not_use_up_its_key(api):
    assert post(api, {"name": ""}, "k-3").status_code == 400
    assert post(api, {"name": "Mira"}, "k-3").status_code == 201


def test_the_header_is_documented_on_every_create(api):
    schema = api.get("/api/schema/?format=json").json()
    for path in ("/api/v1/characters/", "/api/v1/players/", "/v1/books", "/v1/imports"):
        params = schema["paths"][path]["post"].get("parameters", [])
        assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in params), path


CREATES = ["characters", "conversations", "model-configs", "personas", "players", "presets",
           "scenarios"]  # fmt: skip


@pytest.mark.parametrize("route", CREATES)
def test_a_lone_surrogate_with_a_key_is_refused_and_leaves_the_key_unused(api, own, route):
    """A lone surrogate is valid JSON text but has no UTF-8 form: the request's fingerprint
    must not fail on it (a 500), validation refuses it, and the key stays free."""
    from tests.api.helpers import db_snapshot, snapshot_diff, valid_body

    path = f"/api/v1/{route}/"
    good = valid_body(next(r for r in api_routes() if r.template == path[:-1]), "POST", own)
    bad = {**good, "name": "a\ud800b"} if "name" in good else {**good, "external_id": "\udfff"}
    before = db_snapshot()
    for key in ("", "lone-1"):
        headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
        refused = api.generic("POST", path, json.dumps(bad), "application/json", **headers)
        assert 400 <= refused.status_code < 500, refused.content[:300]
        assert snapshot_diff(before, db_snapshot()) == []
    first = api.post(path, good, format="json", HTTP_IDEMPOTENCY_KEY="lone-1")
    again = api.post(path, good, format="json", HTTP_IDEMPOTENCY_KEY="lone-1")
    assert first.status_code == again.status_code == 201, first.content[:300]
    assert again.json()["id"] == first.json()["id"]
    other = api.generic(
        "POST", path, json.dumps(bad), "application/json", HTTP_IDEMPOTENCY_KEY="lone-1"
    )
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"


def test_the_fingerprint_tells_lone_surrogates_apart():
    from console.idempotency import request_fingerprint

    one, two = request_fingerprint({"a": "\ud800"}), request_fingerprint({"a": "\ud801"})
    assert one != two and one == request_fingerprint({"a": "\ud800"})
    assert request_fingerprint({"a": "\ud800"}) != request_fingerprint({"a": "\ufffd"})


@pytest.mark.parametrize(
    "key", ["a\x00b", "\x00", "caf\xe9", "\xff" * 10, "k" * 199 + "\x00", "\x7f\x01"]
)
def test_any_header_text_as_a_key_is_an_answer_not_a_500(api, key):
    """Headers reach Django decoded as Latin-1: any byte but CR and LF can be in a key, and
    one the database cannot store (NUL) is refused by name."""
    response = post(api, {"name": "Mira"}, key)
    assert response.status_code in (201, 400), response.content[:300]
    if response.status_code == 400:
        assert response.json()["error"]["code"] == "invalid_idempotency_key"
    else:
        assert post(api, {"name": "Mira"}, key).json() == response.json()
