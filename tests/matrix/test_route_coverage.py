"""The matrices cover every route: ``console.urls`` at any depth, and every socket.

A route whose path parameters the matrices cannot fill (see ``tables.py``) fails here with a
message saying what to add, and so does a table entry for a route that no longer exists:
the tables stay as small as the facts the URL configuration cannot tell.
"""

from __future__ import annotations

from tests.matrix.routes import all_routes, routes_of, socket_routes
from tests.matrix.tables import (
    KNOWN_FINDINGS,
    PK_MODELS,
    PUBLIC,
    QUERIES,
    READ_POST_BODIES,
    SESSION_PARAMETERS,
    VIEWER_POSTS,
    WRITE_BODIES,
    uncovered,
)


def test_every_route_is_covered():
    sockets = socket_routes()
    assert sockets and all(route.params for route in sockets)  # each names its object
    routes = all_routes() + sockets
    problems = [problem for route in routes for problem in uncovered(route)]
    assert problems == [], "\n".join(problems)
    keys = {route.key for route in routes}
    tables = (PUBLIC, PK_MODELS, SESSION_PARAMETERS, VIEWER_POSTS, READ_POST_BODIES, QUERIES)
    for table in (*tables, KNOWN_FINDINGS, {key for key, _method in WRITE_BODIES}):
        assert set(table) <= keys, f"entries for routes that no longer exist: {set(table) - keys}"
    for route in routes_of("api"):
        if getattr(route.view_class, "read_only_post", False):
            assert route.key in READ_POST_BODIES, f"{route}: add a body to READ_POST_BODIES"


def test_every_route_has_a_kind():
    kinds = {route.kind for route in all_routes()}
    assert kinds == {"api", "public", "admin", "console", "app"}, kinds
