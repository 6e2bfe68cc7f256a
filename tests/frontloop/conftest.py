"""Fixtures of the front loop tests."""

from __future__ import annotations

import pytest

from tests.frontloop.pictures_support import picture_scenario


@pytest.fixture
def pictured(tenant, conversation, model_config, llm):
    llm.images.reset()
    return picture_scenario(tenant, conversation, model_config, llm)
