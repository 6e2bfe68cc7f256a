"""Every page of the player app (``/app/``), read from ``console.urls``.

- signed out, every page sends to the app's sign-in unless it is listed as public;
- a console user (even the tenant's admin) is not a player: every private page is a 403;
- another player's object in the path is a 404 for every method, and nothing changes;
- no page shows another player's objects.
"""

from __future__ import annotations

import pytest

from tests.api.helpers import db_snapshot, snapshot_diff
from tests.matrix.app_world import APP_PUBLIC, build_player
from tests.matrix.routes import routes_of
from tests.matrix.tables import path_for

pytestmark = pytest.mark.django_db

PAGES = routes_of("app")
PRIVATE = [route for route in PAGES if route.key not in APP_PUBLIC]


def _call(client, method: str, path: str):
    return client.post(path, {}) if method == "POST" else client.generic(method, path)


@pytest.fixture
def players(tenant, settings, fast_hashing):
    settings.PLAYER_APP_TENANT = tenant.name
    return build_player(tenant, "mineplayer"), build_player(tenant, "zforeignq")


def test_there_are_app_pages():
    assert PRIVATE and len(PAGES) > len(PRIVATE)


@pytest.mark.parametrize("route", PAGES, ids=str)
def test_signed_out_is_sent_to_sign_in_unless_public(route, players, client):
    me, _ = players
    path = path_for(route, me)
    before = db_snapshot()
    for method in ("GET", "POST"):
        response = _call(client, method, path)
        assert response.status_code < 500, (method, response.status_code)
        to_sign_in = response.status_code == 302 and response["Location"].startswith(
            "/app/login/?next="
        )
        public = route.key in APP_PUBLIC
        assert to_sign_in != public, (method, response.status_code)
    if route.key not in APP_PUBLIC:
        assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize("route", PRIVATE, ids=str)
def test_a_console_user_is_not_a_player(route, players, tenant, console_client):
    me, _ = players
    admin = console_client(tenant, "admin")
    path = path_for(route, me)
    before = db_snapshot()
    for method in ("GET", "POST"):
        assert _call(admin, method, path).status_code == 403, method
    assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize("route", [route for route in PRIVATE if route.params], ids=str)
def test_another_players_object_is_not_found(route, players):
    me, them = players
    foreign = path_for(route, them)
    before = db_snapshot()
    statuses = {m: _call(me.client, m, foreign).status_code for m in ("GET", "POST")}
    assert snapshot_diff(before, db_snapshot()) == []
    assert set(statuses.values()) <= {404, 405} and 404 in statuses.values(), statuses
    own = path_for(route, me)
    assert any(_call(me.client, m, own).status_code != 404 for m in statuses if statuses[m] == 404)


@pytest.mark.parametrize("route", PRIVATE, ids=str)
def test_no_page_shows_another_players_objects(route, players):
    me, them = players
    path_for(route, them)  # their objects exist
    response = me.client.get(path_for(route, me))
    assert response.status_code < 500
    if not response.streaming and response.status_code == 200:
        assert them.label not in response.content.decode(errors="replace")
