"""Every worldbook route and method is in the OpenAPI schema, with its request body."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

ROUTES = {
    "/v1/books": {"get", "post"},
    "/v1/books/{book_id}": {"get"},
    "/v1/books/{book_id}/revisions": {"get", "post"},
    "/v1/books/{book_id}/revisions/{revision}": {"get"},
    "/v1/books/{book_id}/revisions/{revision}/export": {"get"},
    "/v1/books/{book_id}/index": {"get", "post"},
    "/v1/imports": {"post"},
    "/v1/imports/preview": {"post"},
    "/v1/imports/files": {"post"},
    "/v1/context/select": {"post"},
    "/v1/search": {"post"},
    "/v1/prompt-bindings": {"get", "put"},
    "/v1/prompt-bindings/resolve": {"get"},
}


@pytest.fixture
def schema(openapi_document):
    return openapi_document


def test_every_route_is_documented(schema):
    paths = schema["paths"]
    for route, methods in ROUTES.items():
        assert route in paths, route
        assert methods <= set(paths[route]), (route, set(paths[route]))


def test_write_routes_document_their_bodies(schema):
    paths = schema["paths"]
    for route, methods in ROUTES.items():
        for method in methods - {"get"}:
            if route.endswith("/index"):
                continue
            body = paths[route][method].get("requestBody", {})
            assert body.get("content"), (route, method)
    uploads = paths["/v1/imports/files"]["post"]["requestBody"]["content"]
    assert "multipart/form-data" in uploads
