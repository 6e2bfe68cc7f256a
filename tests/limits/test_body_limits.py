"""Every API route refuses a body one byte over its documented size limit with 413, before
parsing it, and takes one exactly at the limit as an ordinary request (a 4xx about its
content, never a 413 or a 5xx). The routes come from the URL resolver, so a new route
without a limit fails here."""

from __future__ import annotations

import uuid

import pytest

from console.body_limit import BodyLimit
from tests.matrix.routes import api_routes

pytestmark = pytest.mark.django_db

ROUTES = [(route, method) for route in api_routes() for method in route.writes]


def _path(route) -> str:
    return route.path(**{name: uuid.uuid4() for name in route.params})


def _body(size: int) -> bytes:
    """A JSON object of exactly ``size`` bytes."""
    head, tail = b'{"padding": "', b'"}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def test_every_api_view_has_a_body_limit():
    missing = [str(r) for r in api_routes() if not issubclass(r.view_class, BodyLimit)]
    assert not missing, f"API views without a body limit (console.body_limit): {missing}"


@pytest.mark.parametrize(("route", "method"), ROUTES, ids=lambda x: str(x))
def test_one_byte_over_the_limit_is_413(api, route, method):
    limit = route.view_class.max_body_bytes
    response = api.generic(method, _path(route), _body(limit + 1), "application/json")
    assert response.status_code == 413, (route, response.content[:300])
    error = response.json()["error"]
    assert error["code"] == "payload_too_large" and error["details"]["max_bytes"] == limit


@pytest.mark.parametrize(("route", "method"), ROUTES, ids=lambda x: str(x))
def test_a_body_at_the_limit_is_read(api, route, method):
    limit = route.view_class.max_body_bytes
    response = api.generic(method, _path(route), _body(limit), "application/json")
    assert 400 <= response.status_code < 500 and response.status_code != 413, (
        route,
        response.status_code,
        response.content[:300],
    )
    assert response.json()["error"]["code"]
