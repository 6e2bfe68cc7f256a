"""Security tests: a console account to attack, and fast password hashing.

Every failed login still runs the password hasher (Django hashes even for unknown names, so
timing does not reveal which exist); the default PBKDF2 would make the lockout tests slow
on two cores, and the hasher is not what they test. Browser tests must not use it: the
live server runs in a child process with the real hashers.
"""

from __future__ import annotations

import pytest
from django.test import Client

# The browser tests' live server and Chromium page (tests/browser/conftest.py).
from tests.browser.conftest import browser_page, live_server_url, login  # noqa: F401

PASSWORD = "pw-demo-123456"


@pytest.fixture
def demo(tenant, fast_hashing):
    """The operator account ``demo`` of tenant ``acme``, password :data:`PASSWORD`."""
    from console.services import ensure_console_user

    user, _ = ensure_console_user(tenant, "demo", PASSWORD, "operator")
    return user


@pytest.fixture
def attempt():
    """``attempt(username, password, address="127.0.0.1", **headers)``: one POST to the
    console login form from a fresh client at ``address``; returns the response."""

    def post(username: str, password: str, address: str = "127.0.0.1", **headers):
        client = Client(REMOTE_ADDR=address, HTTP_USER_AGENT="pytest-attacker/1.0", **headers)
        response = client.post("/console/login/", {"username": username, "password": password})
        response.logged_in = "_auth_user_id" in client.session
        return response

    return post
