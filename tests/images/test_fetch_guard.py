"""The SSRF guard on image URL answers: private and loopback addresses refused, redirects
into them refused, a size cap and a timeout; only http(s)."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from images.errors import ImagesError, Invalid
from images.providers.fetch import fetch_image
from images.services.jobs import generate_assets

pytestmark = pytest.mark.django_db


def png(side=8) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (side, side)).save(out, "PNG")
    return out.getvalue()


def served(server, data: bytes) -> str:
    server.images._files["x.png"] = data
    return f"{server.root_url}/files/x.png"


def test_loopback_is_refused_unless_allowed(images_llm):
    url = served(images_llm, png())
    with pytest.raises(Invalid) as caught:
        fetch_image(url, timeout=2, max_bytes=10_000, allow_loopback=False)
    assert caught.value.code == "fetch_refused"
    assert images_llm.images.fetches == []  # no connection was made
    data, declared = fetch_image(url, timeout=2, max_bytes=10_000, allow_loopback=True)
    assert data.startswith(b"\x89PNG") and declared == "image/png"


@pytest.mark.parametrize(
    "target",
    ["http://10.0.0.1/x.png", "http://169.254.169.254/latest/meta-data/", "http://[::1]:1/",
     "http://192.168.0.1/", "file:///etc/passwd", "http://user:pw@example.com/",
     "http://0.0.0.0:80/", "http://localhost.:1/x"],
)  # fmt: skip
def test_a_redirect_to_a_private_address_is_refused(images_llm, target):
    url = served(images_llm, png())
    images_llm.images.script.redirect_to = target
    with pytest.raises(Invalid) as caught:
        fetch_image(url, timeout=2, max_bytes=10_000, allow_loopback=False)
    assert caught.value.code == "fetch_refused"


def test_a_redirect_to_another_private_address_is_refused_even_with_loopback_allowed(images_llm):
    url = served(images_llm, png())
    images_llm.images.script.redirect_to = "http://169.254.169.254/latest/meta-data/"
    with pytest.raises(Invalid):
        fetch_image(url, timeout=2, max_bytes=10_000, allow_loopback=True)


def test_the_size_cap_plus_and_minus_one(images_llm):
    data = png(64)
    url = served(images_llm, data)
    assert fetch_image(url, timeout=2, max_bytes=len(data), allow_loopback=True)[0] == data
    with pytest.raises(Invalid) as caught:
        fetch_image(url, timeout=2, max_bytes=len(data) - 1, allow_loopback=True)
    assert caught.value.code == "image_too_large"


def test_a_missing_file_is_a_fetch_failure(images_llm):
    with pytest.raises(ImagesError) as caught:
        fetch_image(f"{images_llm.root_url}/files/none.png", timeout=2, max_bytes=10_000,
                    allow_loopback=True)  # fmt: skip
    assert caught.value.code == "image_fetch_failed"


def test_a_backend_pointing_at_a_private_address_gets_its_image_withheld(
    tenant, images_llm, image_config
):
    images_llm.images.script.answer = "url"
    images_llm.images.script.url_base = "http://10.255.255.1:9"
    answer = generate_assets(tenant, {"prompt": "a key", "image_config": "scripted"})
    job = answer["jobs"][0]
    assert job["image_urls"] == [] and job["withheld"][0]["code"] == "fetch_refused"
