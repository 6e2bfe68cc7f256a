"""Creates of the runtime API honour ``Idempotency-Key``: a retried create makes no second
row and answers as the first did; the same key with another body is a 409."""

from __future__ import annotations

import pytest

from roleplay.models import Character

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
