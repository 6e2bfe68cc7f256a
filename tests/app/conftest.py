"""The player app's pages: the accounts' fixtures, characters of every visibility, and a
second signed-in player."""

from __future__ import annotations

import pytest

from tests.accounts import conftest as accounts

# The accounts' fixtures, shared.
app_tenant = accounts.app_tenant
make_account = accounts.make_account
sign_in = accounts.sign_in
player_client = accounts.player_client


@pytest.fixture
def make_character(app_tenant):
    from roleplay.characters.services.characters import create_character

    def make(name: str, **fields):
        fields.setdefault("visibility", "listed")
        fields.setdefault("first_message", f"I am {name}.")
        return create_character(app_tenant, name=name, **fields)

    return make


@pytest.fixture
def other_client(make_account, sign_in):
    account = make_account("bob@example.com")
    client, response = sign_in(account.email)
    assert response.status_code == 302
    client.account = account
    return client
