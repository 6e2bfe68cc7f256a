"""Console pages of image configs: list, create, edit errors beside their field, Test."""

from __future__ import annotations

import pytest

from images.models import ImageConfig

pytestmark = pytest.mark.django_db


def form_body(server, **extra) -> dict:
    return {"name": "studio", "provider": "openai_compatible", "base_url": server.base_url,
            "default_width": 64, "default_height": 64, "default_count": 1,
            "moderation_mode": "backend", "allowed_classifications": "SFW, SUGGESTIVE",
            "timeout_seconds": 5, "slot_deadline_seconds": 60, **extra}  # fmt: skip


def test_an_admin_creates_lists_and_tests_a_config(console_client, tenant, images_llm):
    admin = console_client(tenant, "admin")
    response = admin.post("/console/images/new/", form_body(images_llm))
    assert response.status_code == 302, response.content[:2000]
    config = ImageConfig.objects.get(tenant=tenant)
    assert config.allowed_classifications == ["SFW", "SUGGESTIVE"]
    page = admin.get("/console/images/").content.decode()
    assert "studio" in page and f"/console/images/{config.pk}/test/" in page
    assert 'href="/console/images/"' in page  # the navigation names the area
    result = admin.post(f"/console/images/{config.pk}/test/", HTTP_HX_REQUEST="true")
    fragment = result.content.decode()
    assert 'data-outcome="ok"' in fragment and "/api/v1/images/files/" in fragment
    # The picture's link opens for the signed-in user (a session, not a token).
    url = fragment.split('src="', 1)[1].split('"', 1)[0]
    assert admin.get(url).content.startswith(b"\x89PNG")


def test_a_rule_of_the_service_shows_beside_its_field(console_client, tenant, images_llm):
    admin = console_client(tenant, "admin")
    response = admin.post("/console/images/new/", form_body(images_llm, api_key_env="sk-abc123"))
    assert response.status_code == 200
    assert "environment variable NAME" in response.content.decode()
    response = admin.post("/console/images/new/", form_body(images_llm, provider="automatic1111"))
    assert "Automatic1111 server returns no moderation evidence" in response.content.decode()
    assert not ImageConfig.objects.exists()


def test_a_failed_test_shows_its_code(console_client, tenant, images_llm, image_config):
    operator = console_client(tenant, "operator")
    images_llm.images.script.status = 500
    page = operator.post(f"/console/images/{image_config.pk}/test/").content.decode()
    assert 'data-outcome="error"' in page and "backend_error" in page


def test_a_viewer_reads_but_cannot_test_or_edit(console_client, tenant, image_config):
    viewer = console_client(tenant, "viewer")
    assert viewer.get("/console/images/").status_code == 200
    assert viewer.post(f"/console/images/{image_config.pk}/test/").status_code == 403
    assert viewer.post(f"/console/images/{image_config.pk}/", {"name": "x"}).status_code == 403
