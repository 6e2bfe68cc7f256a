"""Fixtures of the contract tests: the served OpenAPI document, and a daphne child serving the
app on the test database (the browser tests' ``live_server_url``, reused, not copied)."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import live_server_url  # noqa: F401 - a fixture, re-exported

SCHEMA_URL = "/api/schema/?format=json"


@pytest.fixture(scope="session")
def served_document(django_db_setup, django_db_blocker) -> dict:
    """``/api/schema/`` as an anonymous integrator downloads it (JSON)."""
    from django.test import Client

    with django_db_blocker.unblock():
        response = Client().get(SCHEMA_URL)
    assert response.status_code == 200, response.content[:500]
    return json.loads(response.content)


@pytest.fixture
def world(tenant, llm, api_client_for):
    """The calling tenant's objects of every kind, for path parameters and bodies; the
    scripted model answers its auto-reply and compactor configs as they expect."""
    from tests.api.conftest import answer_the_world
    from tests.matrix.world import build_tenancy

    answer_the_world(llm)
    return build_tenancy(tenant, llm.base_url, "own", api_client_for)
