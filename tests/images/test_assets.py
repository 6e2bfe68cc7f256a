"""The asset tool's service against the scripted image server: submitted once, judged by its
evidence, stored, replayed by key; both providers."""

from __future__ import annotations

import pytest

from images import files, signing
from images.errors import Conflict, ImagesError, Invalid, NotFound
from images.models import ImageJob
from images.services.configs import update_image_config
from images.services.jobs import generate_assets
from tests.images.conftest import make_config

pytestmark = pytest.mark.django_db


def body(**extra) -> dict:
    return {"prompt": "a copper key on a table", "image_config": "scripted", **extra}


def stored(tenant, url: str) -> bytes:
    token = url.removeprefix(signing.FILES_PATH)
    return files.read(signing.name_from(token, tenant.pk))


def test_base64_images_with_complete_evidence_are_stored_and_linked(tenant, image_config):
    answer = generate_assets(tenant, body(count=2, width=96, height=80))
    assert answer["moderation_status"] == "COMPLETED" and answer["replayed"] is False
    job = answer["jobs"][0]
    assert job["status"] == "completed" and len(job["image_urls"]) == 2
    assert [m["asset_url"] for m in job["moderation"]] == job["image_urls"]
    assert all(m["classification"] == "SFW" and m["blocked"] is False for m in job["moderation"])
    assert stored(tenant, job["image_urls"][0]).startswith(b"\x89PNG")
    sent = ImageJob.objects.get(pk=job["task_id"])
    assert sent.status == "completed" and len(sent.files) == 2


def test_the_backend_is_asked_for_the_size_count_and_model(tenant, images_llm, image_config):
    update_image_config(image_config, model="sdxl-turbo")
    generate_assets(tenant, body(count=3, width=96, height=80))
    (request,) = images_llm.images.requests
    assert (request["n"], request["size"], request["model"]) == (3, "96x80", "sdxl-turbo")


def test_url_answers_are_fetched_and_checked(tenant, images_llm, image_config):
    images_llm.images.script.answer = "url"
    answer = generate_assets(tenant, body())
    assert len(answer["jobs"][0]["image_urls"]) == 1
    assert len(images_llm.images.fetches) == 1


@pytest.mark.parametrize(
    ("script", "status", "code"),
    [
        ({"blocked": True}, "COMPLETED", "moderation_blocked"),
        ({"classification": "NSFW"}, "COMPLETED", "moderation_class_not_allowed"),
        ({"mismatch": True}, "unknown", "moderation_asset_mismatch"),
        ({"item_status": "PENDING"}, "unknown", "moderation_incomplete"),
        ({"moderation_status": "ERROR"}, "unknown", "moderation_incomplete"),
        ({"evidence": False}, "unknown", "moderation_incomplete"),
        ({"payload": b"<html>not an image</html>"}, "COMPLETED", "unsupported_image_type"),
    ],
)
def test_an_image_without_adopting_evidence_is_withheld(tenant, images_llm, image_config,
                                                        script, status, code):  # fmt: skip
    for key, value in script.items():
        setattr(images_llm.images.script, key, value)
    answer = generate_assets(tenant, body())
    job = answer["jobs"][0]
    assert job["image_urls"] == [] and job["withheld"][0]["code"] == code
    assert answer["moderation_status"] == status
    assert ImageJob.objects.get(pk=job["task_id"]).files == []


def test_a_timeout_is_unknown_and_never_resubmitted(tenant, images_llm, image_config):
    update_image_config(image_config, timeout_seconds=1)
    images_llm.images.script.delay = 3
    answer = generate_assets(tenant, body(), key="k-1", fingerprint="f")
    assert answer["moderation_status"] == "unknown"
    assert answer["jobs"][0]["status"] == "unknown"
    assert answer["jobs"][0]["code"] == "backend_timeout"
    images_llm.images.script.delay = 0
    again = generate_assets(tenant, body(), key="k-1", fingerprint="f")
    assert again["replayed"] is True and again["jobs"][0]["task_id"] == answer["jobs"][0]["task_id"]
    assert len(images_llm.images.requests) == 1


def test_an_idempotency_key_answers_the_first_result(tenant, images_llm, image_config):
    first = generate_assets(tenant, body(), key="abc", fingerprint="one")
    second = generate_assets(tenant, body(), key="abc", fingerprint="one")
    assert second["replayed"] and second["jobs"][0]["task_id"] == first["jobs"][0]["task_id"]
    assert len(second["jobs"][0]["image_urls"]) == 1
    assert len(images_llm.images.requests) == 1
    with pytest.raises(Conflict) as caught:
        generate_assets(tenant, body(prompt="another"), key="abc", fingerprint="two")
    assert caught.value.code == "idempotency_conflict"


def test_a_backend_failure_is_a_502_and_replays_as_one(tenant, images_llm, image_config):
    images_llm.images.script.status = 500
    for _ in range(2):
        with pytest.raises(ImagesError) as caught:
            generate_assets(tenant, body(), key="bad", fingerprint="f")
        assert caught.value.code == "backend_error"
    assert len(images_llm.images.requests) == 1


def test_no_moderation_marks_images_unmoderated(tenant, images_llm, image_config):
    update_image_config(image_config, moderation_mode="none")
    images_llm.images.script.evidence = False
    answer = generate_assets(tenant, body())
    assert answer["moderation_status"] == "unmoderated"
    assert answer["jobs"][0]["moderation"][0]["status"] == "UNMODERATED"


@pytest.mark.parametrize(("flagged", "shown"), [(False, 1), (True, 0)])
def test_a_moderation_call_is_recorded_as_evidence(tenant, images_llm, image_config, flagged,
                                                   shown):  # fmt: skip
    update_image_config(image_config, moderation_mode="call", moderation_model="omni-mod")
    images_llm.images.script.evidence = False
    images_llm.images.script.flagged = flagged
    answer = generate_assets(tenant, body())
    assert len(answer["jobs"][0]["image_urls"]) == shown
    (call,) = images_llm.images.moderation_requests
    assert call["model"] == "omni-mod"
    assert call["input"][0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_failed_moderation_call_leaves_the_image_unknown(tenant, images_llm, image_config):
    update_image_config(image_config, moderation_mode="call")
    images_llm.images.script.moderation_http_status = 503
    answer = generate_assets(tenant, body())
    assert answer["moderation_status"] == "unknown" and answer["jobs"][0]["image_urls"] == []


def test_the_automatic1111_api(tenant, images_llm, a1111_config):
    answer = generate_assets(
        tenant, {"prompt": "a lighthouse", "image_config": "forge", "count": 2, "width": 72}
    )
    assert len(answer["jobs"][0]["image_urls"]) == 2
    (request,) = images_llm.images.requests
    assert request["path"] == "sdapi/v1/txt2img"
    assert (request["batch_size"], request["width"], request["height"]) == (2, 72, 64)
    assert request["override_settings"] == {"return_grid": False}


def test_an_invalid_request_or_foreign_config_calls_nothing(tenant, other_tenant, images_llm):
    theirs = make_config(other_tenant, images_llm, name="theirs")
    with pytest.raises(Invalid):
        generate_assets(tenant, body(count=9))
    with pytest.raises(NotFound):
        generate_assets(tenant, body(image_config=str(theirs.pk)))
    assert images_llm.images.requests == [] and not ImageJob.objects.exists()
