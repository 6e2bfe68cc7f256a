"""Fixtures of the matrices: two tenants with objects of every kind, and signed-in clients.

The other tenant's objects all carry ``FOREIGN`` in their names and texts, so a page or an
answer that shows any of them is caught by a plain substring test.
"""

from __future__ import annotations

import pytest
from django.test import Client

from tests.matrix.world import build_tenancy

FOREIGN = "zforeignq"


@pytest.fixture
def mine(tenant, llm, api_client_for):
    return build_tenancy(tenant, llm.base_url, "mine", api_client_for)


@pytest.fixture
def theirs(other_tenant, llm, api_client_for):
    return build_tenancy(other_tenant, llm.base_url, FOREIGN, api_client_for)


@pytest.fixture
def console_client(db):
    """``console_client(tenant, role)``: a Django client signed in as a new console user."""
    from console.services import ensure_console_user

    made = iter(range(1, 1000))

    def make(tenant, role: str) -> Client:
        user, _ = ensure_console_user(tenant, f"{role}-{next(made)}-{tenant.name}", None, role)
        client = Client()
        client.force_login(user)
        client.user = user
        return client

    return make
