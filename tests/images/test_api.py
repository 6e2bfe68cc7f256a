"""The images REST API: configs (and their test), the asset tool, signed image links."""

from __future__ import annotations

import json

import pytest
from django.core import signing as django_signing

from images import signing
from images.errors import NotFound
from images.models import ImageConfig, ImageJob
from tests.api.helpers import assert_error
from tests.images.conftest import make_config

pytestmark = pytest.mark.django_db

GENERATIONS = "/api/v1/images/generations"


def create_body(server, **extra) -> dict:
    return {"name": "studio", "provider": "openai_compatible", "base_url": server.base_url,
            "default_width": 64, "default_height": 64, **extra}  # fmt: skip


def test_config_crud(api, images_llm):
    created = api.post("/api/v1/image-configs/", create_body(images_llm), format="json")
    assert created.status_code == 201, created.content
    config = created.json()
    assert config["api_key_configured"] is False and config["moderation_mode"] == "backend"
    path = f"/api/v1/image-configs/{config['id']}/"
    assert api.get("/api/v1/image-configs").json()["results"][0]["id"] == config["id"]
    patched = api.patch(path, {"moderation_mode": "none"}, format="json")
    assert patched.json()["moderation_mode"] == "none"
    assert api.delete(path).status_code == 204
    assert_error(api.get(path), 404, "not_found")


@pytest.mark.parametrize(
    ("extra", "code", "field"),
    [
        ({"api_key_env": "sk-live-123"}, "api_key_not_allowed", "api_key_env"),
        ({"default_count": 9}, "out_of_range", "default_count"),
        ({"provider": "automatic1111"}, "invalid_combination", "moderation_mode"),
        ({"base_url": "file:///etc"}, "invalid_url", "base_url"),
        ({"name": "a\u0000b"}, "invalid_text", "name"),
    ],
)
def test_each_bad_config_field_is_a_422_naming_it(api, images_llm, extra, code, field):
    response = api.post("/api/v1/image-configs", create_body(images_llm, **extra), format="json")
    assert assert_error(response, 422, code)["details"]["field"] == field
    assert not ImageConfig.objects.exists()


def test_a_body_of_another_shape_is_a_400_naming_each_field(api, images_llm, image_config):
    response = api.post(GENERATIONS, {"prompt": "x", "image_config": "scripted", "size": 1},
                        format="json")  # fmt: skip
    assert assert_error(response, 400, "validation_error")["details"]["errors"] == [
        {"loc": "size", "msg": "unknown field"}
    ]
    assert_error(api.post(GENERATIONS, [1], format="json"), 400, "validation_error")
    assert images_llm.images.requests == []


def test_the_test_button_draws_one_picture(api, tenant, images_llm, image_config):
    response = api.post(f"/api/v1/image-configs/{image_config.pk}/test", {}, format="json")
    result = response.json()
    assert result["ok"] is True and result["moderation_status"] == "COMPLETED"
    picture = api.get(result["image_url"], HTTP_ACCEPT="image/*")
    assert picture.status_code == 200 and picture["Content-Type"] == "image/png"
    images_llm.images.script.status = 401
    failed = api.post(f"/api/v1/image-configs/{image_config.pk}/test").json()
    assert (failed["ok"], failed["error_code"]) == (False, "backend_error")


def test_generation_over_http(api, tenant, images_llm, image_config):
    body = {"prompt": "a copper key", "image_config": "scripted", "count": 2}
    response = api.post(GENERATIONS, body, format="json")
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["moderation_status"] == "COMPLETED"
    urls = answer["jobs"][0]["image_urls"]
    assert len(urls) == 2 and all(u.startswith("/api/v1/images/files/") for u in urls)
    assert api.get(urls[0]).content.startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"prompt": "x" * 32_769}, "prompt", "too_long"),
        ({"count": 0}, "count", "out_of_range"),
        ({"count": 9}, "count", "out_of_range"),
        ({"width": 2**53}, "width", "out_of_range"),
        ({"height": 1.5}, "height", "invalid_type"),
        ({"reference_images": ["https://a.example/x"] * 2}, "reference_images.1", "duplicate"),
        ({"reference_images": [f"https://a.example/{i}" for i in range(10)]},
         "reference_images", "too_many"),
        ({"reference_images": ["https://u:p@a.example/x"]}, "reference_images.0", "invalid_url"),
        ({"image_config": "c" * 257}, "image_config", "too_long"),
        ({"prompt": "\ud800"}, "prompt", "invalid_text"),
    ],
)  # fmt: skip
def test_every_generation_field_is_a_422_naming_it(api, images_llm, image_config, body, field,
                                                   code):  # fmt: skip
    sent = {"prompt": "a key", "image_config": "scripted", **body}
    raw = json.dumps(sent)  # escapes a lone surrogate as a client spells it
    error = assert_error(api.post(GENERATIONS, raw, content_type="application/json"), 422, code)
    assert error["details"]["field"] == field
    assert images_llm.images.requests == []


def test_an_idempotency_key_answers_the_first_result_over_http(api, images_llm, image_config):
    body = {"prompt": "a copper key", "image_config": "scripted"}
    first = api.post(GENERATIONS, body, format="json", HTTP_IDEMPOTENCY_KEY="key-1").json()
    second = api.post(GENERATIONS, body, format="json", HTTP_IDEMPOTENCY_KEY="key-1").json()
    assert second["replayed"] and second["jobs"][0]["task_id"] == first["jobs"][0]["task_id"]
    assert len(images_llm.images.requests) == 1
    other = dict(body, prompt="another")
    response = api.post(GENERATIONS, other, format="json", HTTP_IDEMPOTENCY_KEY="key-1")
    assert_error(response, 409, "idempotency_conflict")
    long_key = api.post(GENERATIONS, body, format="json", HTTP_IDEMPOTENCY_KEY="k" * 201)
    assert_error(long_key, 400, "invalid_idempotency_key")


def test_a_backend_failure_is_a_502(api, images_llm, image_config):
    images_llm.images.script.status = 500
    body = {"prompt": "a copper key", "image_config": "scripted"}
    assert_error(api.post(GENERATIONS, body, format="json"), 502, "backend_error")
    assert ImageJob.objects.get().status == "failed"


def test_another_tenant_never_sees_an_image_even_with_a_guessed_url(
    api, api_client_for, other_tenant, images_llm, image_config
):
    body = {"prompt": "a copper key", "image_config": "scripted"}
    url = api.post(GENERATIONS, body, format="json").json()["jobs"][0]["image_urls"][0]
    theirs = api_client_for(other_tenant)
    assert_error(theirs.get(url), 404, "not_found")
    # Their own signature on our file's name: the name is under our tenant's prefix.
    name = signing.name_from(url.removeprefix(signing.FILES_PATH), image_config.tenant_id)
    forged = signing.url_for(other_tenant.pk, name)
    assert_error(theirs.get(forged), 404, "not_found")
    # A token signed with another key, or altered, or expired.
    token = url.removeprefix(signing.FILES_PATH)
    assert_error(api.get(signing.FILES_PATH + token[:-2] + "xx"), 404, "not_found")
    fake = django_signing.dumps({"t": str(image_config.tenant_id), "n": name}, salt="other")
    assert_error(api.get(signing.FILES_PATH + fake), 404, "not_found")
    assert signing.name_from(token, image_config.tenant_id, max_age=60) == name
    with pytest.raises(NotFound):
        signing.name_from(token, image_config.tenant_id, max_age=-1)
    # And no config of another tenant can be used or read.
    mine = make_config(other_tenant, images_llm, name="theirs")
    sent = {"prompt": "x", "image_config": str(mine.pk)}
    assert_error(api.post(GENERATIONS, sent, format="json"), 404, "not_found")
    assert_error(api.get(f"/api/v1/image-configs/{mine.pk}"), 404, "not_found")


def test_a_play_token_reads_images_but_cannot_generate(api_client_for, tenant, image_config):
    player = api_client_for(tenant, ["play"])
    body = {"prompt": "a copper key", "image_config": "scripted"}
    assert_error(player.post(GENERATIONS, body, format="json"), 403, "forbidden")
    url = api_client_for(tenant, ["content"]).post(GENERATIONS, body, format="json").json()
    assert player.get(url["jobs"][0]["image_urls"][0]).status_code == 200
