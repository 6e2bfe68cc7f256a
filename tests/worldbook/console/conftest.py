"""Fixtures of the worldbook console tests: a logged-in client per role, books, a staging dir."""

from __future__ import annotations

import pytest
from django.test import Client

from console.services import ensure_console_user


def _client(tenant, username: str, role: str) -> Client:
    user, _ = ensure_console_user(tenant, username, None, role)  # no hashing: faster
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def operator(tenant):
    return _client(tenant, "wb-op", "operator")


@pytest.fixture
def admin(tenant):
    return _client(tenant, "wb-admin", "admin")


@pytest.fixture
def viewer(tenant):
    return _client(tenant, "wb-viewer", "viewer")


@pytest.fixture
def outsider(other_tenant):
    """An operator of another tenant."""
    return _client(other_tenant, "wb-outsider", "operator")


@pytest.fixture(autouse=True)
def staging_dir(tmp_path, monkeypatch):
    """Import uploads are staged in a per-test directory, not in the project's var/."""
    from worldbook.views import staging

    directory = tmp_path / "staging"
    monkeypatch.setattr(staging, "STAGING_DIR", directory)
    return directory


@pytest.fixture
def make_book(db):
    """``make_book(tenant, entries, name=...)`` → a Book at revision 1 (via the service)."""
    from worldbook import services

    def make(tenant, entries=(), name="Greyport", description="A steam city."):
        model = services.validate_book(
            {"name": name, "description": description, "entries": list(entries)}
        )
        book, _ = services.create_book(tenant, model)
        return book

    return make


GATE = {
    "id": "gate",
    "title": "City gate",
    "content": "The copper key opens only the side door of the city gate.",
    "keys": ["copper key", "gate"],
    "priority": 20,
}
BACKGROUND = {
    "id": "background",
    "title": "Greyport",
    "content": "Greyport is a steam city lit by gas lamps.",
    "constant": True,
}


@pytest.fixture
def book(tenant, make_book):
    return make_book(tenant, [BACKGROUND, GATE])


@pytest.fixture
def foreign_book(other_tenant, make_book):
    return make_book(other_tenant, [GATE], name="Theirs")
