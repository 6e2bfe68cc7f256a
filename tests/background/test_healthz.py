"""``GET /healthz``: 200 with every part when all is up; 503 naming a part that really fails."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db(transaction=True)

DEAD_REDIS = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        # A unix socket nobody listens on: a real connection failure, not a mocked check.
        "LOCATION": "unix:///nonexistent-healthz-test/redis.sock",
    }
}


def _healthz(expected_status: int, attempts: int = 5):
    """The health answer, asked again a few times if it differs: the Celery part is a 0.5 s
    broadcast ping, which a loaded machine can miss once without anything being down."""
    for _ in range(attempts):
        response = Client().get("/healthz")
        if response.status_code == expected_status:
            break
    return response


def test_all_up_is_200_with_the_documented_shape(celery_worker, model_config):
    response = _healthz(200)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["ok"] is True and body["failing"] == []
    database, redis, celery, llm = body["database"], body["redis"], body["celery"], body["llm"]
    assert set(database) == {"ok", "server_version", "pgvector"} and database["ok"] is True
    assert database["server_version"].startswith("16") and database["pgvector"]
    assert redis == {"ok": True}
    assert celery["ok"] is True and celery_worker.hostname in celery["workers"]
    assert llm == {
        "default_config": model_config.name,
        "provider": "openai_compatible",
        "ok": True,
    }


def test_dead_redis_is_503_naming_redis(celery_worker, model_config):
    with override_settings(CACHES=DEAD_REDIS):
        response = Client().get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["ok"] is False and "redis" in body["failing"]
    assert body["redis"]["ok"] is False and body["redis"]["error"]
    assert body["database"]["ok"] is True and "database" not in body["failing"]
    assert body["llm"]["ok"] is True
    # Once the cache is back, so is the service.
    recovered = _healthz(200)
    assert recovered.status_code == 200, recovered.content


def test_health_needs_no_authentication(celery_worker, model_config):
    response = Client().get("/healthz", HTTP_AUTHORIZATION="Bearer nonsense")
    assert response.status_code in (200, 503)  # answered, not refused: no 401/403
    assert response["Content-Type"] == "application/json"
