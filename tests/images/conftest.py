"""Fixtures of the images tests: configs pointed at the scripted server's image routes."""

from __future__ import annotations

import pytest


@pytest.fixture
def images_llm(llm):
    """The scripted server with a fresh image script (base64 answers, complete SFW
    evidence)."""
    llm.images.reset()
    return llm


def make_config(tenant, server, **fields):
    from images.services.configs import create_image_config

    values = {
        "name": f"cfg-{len(fields)}-{fields.get('provider', 'openai')}-{fields.get('name', '')}",
        "provider": "openai_compatible",
        "base_url": server.base_url,
        "default_width": 64,
        "default_height": 64,
        "timeout_seconds": 5,
        **fields,
    }
    return create_image_config(tenant, **values)


@pytest.fixture
def image_config(tenant, images_llm):
    return make_config(tenant, images_llm, name="scripted")


@pytest.fixture
def a1111_config(tenant, images_llm):
    return make_config(
        tenant, images_llm, name="forge", provider="automatic1111",
        base_url=images_llm.root_url, moderation_mode="none",
    )  # fmt: skip


@pytest.fixture
def console_client(db):
    """``console_client(tenant, role)``: a Django client signed in as a new console user."""
    from tests.matrix.conftest import console_client as matrix_console_client

    return matrix_console_client.__wrapped__(db)
