"""The served OpenAPI document is valid, complete and honest about errors.

Everything is read from the document and the code: the operations from ``paths``, the routes
from the URL resolver, the error bodies from ``console.errors.exception_handler`` itself. A
new route, schema or error kind is checked as soon as it exists.
"""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import OpenAPIV31SpecValidator, validate

from console.schema import ERROR_SCHEMA, document_schemas, operations, subschemas
from tests.contract.documents import component_validator, concrete_path, error_samples, shape
from tests.matrix.routes import api_routes

pytestmark = pytest.mark.django_db


def test_the_document_validates_as_openapi_3_1(served_document):
    assert served_document["openapi"] == "3.1.0"
    validate(served_document, cls=OpenAPIV31SpecValidator)


def test_every_schema_is_json_schema_2020_12(served_document):
    """3.1 delegates schema objects to JSON Schema: each must pass the draft's meta-schema
    (the OpenAPI validator above checks the document's structure, not every keyword)."""
    roots = [schema for schema in document_schemas(served_document) if schema is not None]
    assert roots
    for schema in roots:
        Draft202012Validator.check_schema(schema)


def test_every_api_route_and_method_is_an_operation(served_document):
    """Both APIs (``/api/v1/`` and ``/v1/``), every route the URL resolver knows."""
    documented = {(shape(path), method.upper()) for path, method, _ in operations(served_document)}
    routes = api_routes()
    assert {route.prefix for route in routes} == {"/api/v1/", "/v1/"}
    for route in routes:
        for method in route.methods:
            assert (shape(route.template), method) in documented, f"{method} {route.template}"


def test_no_generated_titles_and_property_names_survive(served_document):
    """Titles are gone everywhere; a property *named* ``title`` is data and stays."""
    for root in document_schemas(served_document):
        for node in subschemas(root):
            assert not isinstance(node.get("title"), str), node
    conversation = served_document["components"]["schemas"]["Conversation"]
    assert "title" in conversation["properties"]


def test_every_operation_documents_its_errors(served_document):
    reference = {"$ref": f"#/components/schemas/{ERROR_SCHEMA}"}
    for path, method, operation in operations(served_document):
        responses = operation["responses"]
        for status in ("401", "403", "503"):
            assert responses[status]["content"]["application/json"]["schema"] == reference, (
                method,
                path,
                status,
            )
        if "requestBody" in operation:
            assert {"400", "413", "415", "422"} <= set(responses), (method, path)
        if any(p["in"] == "path" for p in operation.get("parameters", [])):
            assert "404" in responses, (method, path)


@pytest.mark.parametrize("sample", error_samples(), ids=lambda sample: sample.label)
def test_every_error_the_handler_makes_matches_the_error_component(served_document, sample):
    """Built from the handler's own cases: a new kind of error must fit the documented body."""
    response = sample.respond()
    assert response.status_code >= 400
    component_validator(served_document, ERROR_SCHEMA).validate(response.data)


def test_no_enum_is_named_by_a_hash_of_its_values(served_document):
    """Generated clients name classes after components: a name must not change when an
    enum gains a value."""
    from drf_spectacular.plumbing import list_hash

    for name, component in served_document["components"]["schemas"].items():
        values = [v for v in component.get("enum") or () if v not in ("", None)]
        if values:
            digest = list_hash([(v, v) for v in values])[:3].capitalize()
            assert not name.endswith(digest + "Enum"), name


def _json_bodies(document: dict):
    for path, method, operation in operations(document):
        content = operation.get("requestBody", {}).get("content", {})
        if "application/json" in content:
            yield path, method, content["application/json"]["schema"]


def test_a_body_the_server_closes_is_documented_closed(served_document, world, api_client_for):
    """A request body that refuses an unknown property says ``additionalProperties: false``;
    else a generated client, or the fuzzer's valid data, sends extras and meets a 400."""
    client = api_client_for(world.tenant)
    schemas = served_document["components"]["schemas"]
    bodies = list(_json_bodies(served_document))
    assert bodies
    for path, method, schema in bodies:
        response = client.generic(
            method.upper(), concrete_path(path, world), '{"__unknown__": 1}',
            content_type="application/json",
        )  # fmt: skip
        assert 400 <= response.status_code < 500, (method, path, response.content[:300])
        errors = response.json()["error"]["details"].get("errors", [])
        refused = any(error.get("loc") == "__unknown__" for error in errors)
        component = schemas[schema["$ref"].rsplit("/", 1)[-1]]
        closed = component.get("additionalProperties") is False
        assert refused == closed, (method, path, refused, closed, response.content[:300])
