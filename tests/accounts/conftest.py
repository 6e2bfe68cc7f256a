"""Player accounts: a tenant the player app serves, fast hashing, signed-in clients."""

from __future__ import annotations

import pytest
from django.test import Client

PASSWORD = "pw-player-123456"


@pytest.fixture
def app_tenant(tenant, settings, fast_hashing):
    """``acme``, the tenant ``/app/`` serves in these tests."""
    settings.PLAYER_APP_TENANT = tenant.name
    return tenant


@pytest.fixture
def make_account(app_tenant):
    from roleplay.accounts import services

    def make(email: str = "ann@example.com", **fields):
        return services.create_account(app_tenant, email=email, password=PASSWORD, **fields)

    return make


@pytest.fixture
def sign_in():
    """``sign_in(email, password=PASSWORD, address=...)`` → (client, response)."""

    def post(email: str, password: str = PASSWORD, address: str = "127.0.0.1"):
        client = Client(REMOTE_ADDR=address, HTTP_USER_AGENT="pytest-phone/1.0")
        response = client.post("/app/login/", {"email": email, "password": password})
        return client, response

    return post


@pytest.fixture
def player_client(make_account, sign_in):
    """A signed-in player (their account on ``client.account``)."""
    account = make_account()
    client, response = sign_in(account.email)
    assert response.status_code == 302, response.content
    client.account = account
    return client
