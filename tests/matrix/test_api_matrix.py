"""Every API route of ``console.urls`` (``/api/v1/`` and ``/v1/``), by tenant and by principal.

- another tenant's object in the path is a 404 ``not_found`` for every method, and nothing
  changes; the caller's own object on the same route is found;
- a read-only principal (a viewer's console session) writes nothing: its writes are a 403,
  and a view whose POST only reads (``read_only_post``) is called with a body that reaches
  the work (``tables.READ_POST_BODIES``) and must still change nothing;
- a token reaches only what its scopes grant (each view declares ``required_scope`` and
  ``read_scopes``): anything else is a 403 that changes nothing, and no write is open to
  every scope;
- no answer shows another tenant's objects.
"""

from __future__ import annotations

import json

import pytest

from console.models import Scope
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff
from tests.matrix.routes import routes_of
from tests.matrix.tables import KNOWN_FINDINGS, READ_POST_BODIES, WRITE_BODIES, path_for

pytestmark = pytest.mark.django_db

API = routes_of("api")
SAFE = ("GET", "HEAD", "OPTIONS")


def _send(client, method: str, path: str, body=None):
    return client.generic(method, path, json.dumps(body or {}), content_type="application/json")


def _body(route, method: str, world):
    make = WRITE_BODIES.get((route.key, method))
    return make(world) if make else None


def _deletes_last(methods) -> list[str]:
    return sorted(methods, key=lambda method: method == "DELETE")


def test_both_apis_are_in_the_matrix():
    assert {route.prefix for route in API} == {"/api/v1/", "/v1/"}


@pytest.mark.parametrize("route", [route for route in API if route.params], ids=str)
def test_another_tenants_object_is_404(route, mine, theirs, api_client_for):
    api = api_client_for(mine.tenant)
    foreign = path_for(route, theirs)
    before = db_snapshot()
    for method in route.methods:
        response = _send(api, method, foreign, _body(route, method, theirs))
        assert response.status_code != 422, (
            f"{method} {route.template} validates the body before looking the object up: "
            "give it a valid body in tables.WRITE_BODIES"
        )
        assert_error(response, 404, "not_found")
    assert snapshot_diff(before, db_snapshot()) == []
    own = path_for(route, mine)
    for method in _deletes_last(route.methods):
        assert _send(api, method, own, _body(route, method, mine)).status_code != 404, method


@pytest.mark.parametrize(
    "route", [KNOWN_FINDINGS.mark(route) for route in API if route.writes], ids=str
)
def test_a_read_only_principal_writes_nothing(route, mine, console_client):
    viewer = console_client(mine.tenant, "viewer")
    path = path_for(route, mine)
    reads_only = getattr(route.view_class, "read_only_post", False)
    before = db_snapshot()
    for method in route.writes:
        if reads_only and method == "POST":
            body = READ_POST_BODIES[route.key]
            response = _send(viewer, method, path, body(mine) if body else None)
            assert response.status_code != 403 and response.status_code < 500, response.content
        else:
            assert_error(_send(viewer, method, path), 403, "forbidden")
    assert snapshot_diff(before, db_snapshot()) == []


def _granted(route, scope: str, method: str) -> bool:
    """Whether ``HasTenant`` should let a token with only ``scope`` make this call, by what
    the view declares (``required_scope``, ``read_scopes``, ``read_only_post``)."""
    view = route.view_class
    needed = getattr(view, "required_scope", Scope.CONTENT)
    reads = method in SAFE or (method == "POST" and getattr(view, "read_only_post", False))
    allowed = set(getattr(view, "read_scopes", (needed,))) if reads else {needed}
    return scope == Scope.ADMIN or scope in allowed


DENIED = [
    pytest.param(route, scope.value, method, id=f"{scope.value} {method} {route.template}")
    for route in API
    for method in route.methods
    for scope in Scope
    if not _granted(route, scope, method)
]


def test_no_write_is_open_to_every_scope():
    """(A POST that only reads is open to every reader; the read-only test holds it to that.)"""
    for route in API:
        for method in route.writes:
            if method == "POST" and getattr(route.view_class, "read_only_post", False):
                continue
            assert any(not _granted(route, s, method) for s in Scope), (method, str(route))


@pytest.mark.parametrize(("route", "scope", "method"), DENIED)
def test_a_token_reaches_only_its_scopes(route, scope, method, mine, api_client_for):
    client = api_client_for(mine.tenant, [scope])
    before = db_snapshot()
    assert_error(_send(client, method, path_for(route, mine)), 403, "forbidden")
    assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize("route", [route for route in API if "GET" in route.methods], ids=str)
def test_no_answer_shows_another_tenants_objects(route, mine, theirs, api_client_for):
    response = api_client_for(mine.tenant).get(path_for(route, mine))
    assert response.status_code == 200, response.content[:300]
    raw = b"".join(response.streaming_content) if response.streaming else response.content
    body = raw.decode(errors="replace")  # images and archives too
    assert not [mark for mark in theirs.marks() if mark in body]
