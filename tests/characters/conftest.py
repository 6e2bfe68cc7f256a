"""Fixtures of the character tests: signed-in console clients per role, and API clients."""

from __future__ import annotations

import pytest
from django.test import Client

from console.services import ensure_console_user


def signed_in(tenant, role: str) -> Client:
    user, _ = ensure_console_user(tenant, f"{role}-{tenant.name}", None, role)
    client = Client()
    client.force_login(user)
    client.user = user
    return client


@pytest.fixture
def operator_client(tenant):
    return signed_in(tenant, "operator")


@pytest.fixture
def viewer_client(tenant):
    return signed_in(tenant, "viewer")


@pytest.fixture
def content_api(api_client_for, tenant):
    return api_client_for(tenant, scopes=["content"])


@pytest.fixture
def play_api(api_client_for, tenant):
    return api_client_for(tenant, scopes=["play"])


@pytest.fixture
def other_api(api_client_for, other_tenant):
    return api_client_for(other_tenant)
