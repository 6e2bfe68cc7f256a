"""The console shell around every page: the styled "not found" page (with the menu for a
signed-in user, JSON for the API), and who is signed in, said once: "tenant · user (role)"."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_missing_console_page_is_the_styled_404_with_the_menu(admin_client, settings):
    assert settings.DEBUG is False  # Django's technical page otherwise
    response = admin_client.get("/console/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert 'id="not-found"' in page and "Page not found" in page
    assert 'href="/console/worldbooks/"' in page  # the menu is there
    assert 'href="/console/"' in page  # and a way back
    assert "/console/no-such-page/" in page  # what was asked for, escaped by the template


def test_a_foreign_or_missing_object_is_the_same_page(admin_client):
    response = admin_client.get(f"/console/characters/{uuid.uuid4()}/")
    assert response.status_code == 404 and 'id="not-found"' in response.content.decode()


def test_signed_out_the_404_offers_the_login_and_no_menu():
    response = Client().get("/nowhere/")
    page = response.content.decode()
    assert response.status_code == 404 and 'id="not-found"' in page
    assert 'href="/console/login/' in page and 'href="/console/worldbooks/"' not in page


def test_api_404s_stay_json(api):
    for path in ("/api/v1/no-such-thing/", "/v1/no-such-thing/"):
        response = Client().get(path)
        assert response.status_code == 404, path
        assert response.json() == {
            "error": {"code": "not_found", "message": "not found", "details": {}}
        }


def test_the_header_names_tenant_user_and_role_once(admin_client, tenant):
    response = admin_client.get("/console/")
    assert response.context["who"] == "acme · boss (admin)"


def test_signed_out_there_is_no_header_identity():
    response = Client().get("/console/login/")
    assert response.context["who"] == ""
