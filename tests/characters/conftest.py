"""Fixtures of the character tests: API clients per scope (the API tests' own) and signed-in
console clients per role (the matrices' ``console_client``)."""

from __future__ import annotations

import pytest

from tests.api.conftest import content_api, other_api, play_api  # noqa: F401 (fixtures)
from tests.matrix.conftest import console_client  # noqa: F401 (fixture)


@pytest.fixture
def operator_client(console_client, tenant):  # noqa: F811
    return console_client(tenant, "operator")


@pytest.fixture
def viewer_client(console_client, tenant):  # noqa: F811
    return console_client(tenant, "viewer")
