"""Every HTTP route that is not the API, read from ``console.urls``: console pages, the play
page, the Django admin and the public pages.

- signed out, every page sends to the sign-in page unless it is listed as public;
- another tenant's object in the path is a 404 for every method, and nothing changes;
- a viewer's write (any method but GET/HEAD/OPTIONS) is refused and changes nothing; the few
  pages whose POST only reads say so in ``tables.VIEWER_POSTS``;
- no page shows another tenant's objects;
- the Django admin (all tenants' data) is closed to console users of every role.
"""

from __future__ import annotations

import pytest
from django.conf import settings

from tests.api.helpers import db_snapshot, snapshot_diff
from tests.matrix.routes import routes_of
from tests.matrix.tables import PUBLIC, VIEWER_POSTS, path_for

pytestmark = pytest.mark.django_db

PAGES = routes_of("console")
PRIVATE_PAGES = [route for route in PAGES if route.key not in PUBLIC]
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def _call(client, method: str, path: str, data=None):
    if method == "POST":
        return client.post(path, data or {})
    return client.generic(method, path)


@pytest.mark.parametrize("route", PAGES, ids=str)
def test_signed_out_is_sent_to_sign_in_unless_public(route, mine, client):
    path = path_for(route, mine)
    before = db_snapshot()
    for method in ("GET", "POST"):
        response = _call(client, method, path)
        public = route.key in PUBLIC
        assert public or response.status_code < 500, (method, response.status_code)
        to_sign_in = response.status_code == 302 and response["Location"].startswith(
            f"{settings.LOGIN_URL}?next="
        )
        assert to_sign_in != public, (
            f"{method} {path} answered {response.status_code} signed out: a public page "
            "belongs in tables.PUBLIC, any other must require signing in"
        )
    assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize("route", [route for route in PAGES if route.params], ids=str)
def test_another_tenants_object_is_not_found(route, mine, theirs, console_client):
    me = console_client(mine.tenant, "admin")
    them = console_client(theirs.tenant, "admin")
    foreign = path_for(route, theirs, them)
    before = db_snapshot()
    statuses = {method: _call(me, method, foreign).status_code for method in ("GET", "POST")}
    assert snapshot_diff(before, db_snapshot()) == []
    # 405: a method the page does not serve, refused before any lookup.
    assert set(statuses.values()) <= {404, 405} and 404 in statuses.values(), statuses
    # The same page with the caller's own object is found: the 404 above is tenancy.
    own = path_for(route, mine, me)
    assert any(_call(me, m, own).status_code != 404 for m in statuses if statuses[m] == 404)


@pytest.mark.parametrize("route", PRIVATE_PAGES, ids=str)
def test_a_viewer_writes_nothing(route, mine, console_client):
    admin = console_client(mine.tenant, "admin")
    viewer = console_client(mine.tenant, "viewer")
    path = path_for(route, mine, admin)
    admin.get(path)  # a permitted read first: caches filled on first read are not writes
    before = db_snapshot()
    assert viewer.get(path).status_code < 500
    allowed = VIEWER_POSTS.get(route.key)
    if allowed is None:
        for method in WRITES:
            response = _call(viewer, method, path)
            assert response.status_code == 403, (method, response.status_code)
    else:
        for body, status in allowed:
            assert viewer.post(path, body(mine)).status_code == status
    assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize("route", PRIVATE_PAGES, ids=str)
def test_no_page_shows_another_tenants_objects(route, mine, theirs, console_client):
    me = console_client(mine.tenant, "admin")
    response = me.get(path_for(route, mine, me))
    assert response.status_code < 500
    if not response.streaming:
        page = response.content.decode(errors="replace")
        assert not [mark for mark in theirs.marks() if mark in page]


def test_the_admin_site_is_closed_to_console_users(mine, console_client):
    """Django's admin shows every tenant's rows: a console user, even a tenant's admin (the
    highest role; none is staff), never gets in."""
    admin_routes = [route for route in routes_of("admin") if route.key not in PUBLIC]
    assert admin_routes
    user = console_client(mine.tenant, "admin")
    before = db_snapshot()
    for route in admin_routes:
        for method in ("get", "post"):
            response = getattr(user, method)(path_for(route, mine), follow=True)
            # Every way ends on the admin's own sign-in form.
            chain = response.redirect_chain
            assert chain and chain[-1][0].startswith("/admin/login/"), (route.key, method, chain)
    assert snapshot_diff(before, db_snapshot()) == []
