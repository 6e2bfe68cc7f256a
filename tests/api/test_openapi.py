"""OpenAPI schema and docs, the router's API root and format suffixes."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from rest_framework.test import APIClient

from tests.api.helpers import api_routes, assert_error

JSON_ACCEPT = "application/vnd.oai.openapi+json"


@pytest.fixture
def schema(db) -> dict:
    response = APIClient().get("/api/schema/", HTTP_ACCEPT=JSON_ACCEPT)
    assert response.status_code == 200
    return json.loads(response.content)


def _normalize(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{pk}", path).rstrip("/")


def test_schema_renders_as_yaml_without_authentication(db):
    response = APIClient().get("/api/schema/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi")
    document = yaml.safe_load(response.content)
    assert document["openapi"].startswith("3.")
    assert document["info"]["title"]


def test_schema_renders_as_json(schema):
    assert schema["openapi"].startswith("3.") and schema["paths"]


def test_schema_format_query_parameter_selects_json(db):
    response = APIClient().get("/api/schema/?format=json")
    assert response.status_code == 200
    assert json.loads(response.content)["openapi"].startswith("3.")


def test_schema_lists_every_route_and_method(schema):
    documented = {
        _normalize(path): {m.upper() for m in ops if m != "parameters"}
        for path, ops in schema["paths"].items()
    }
    for route in api_routes():
        assert _normalize(route.template) in documented, route
        assert set(route.methods) <= documented[_normalize(route.template)], route


def test_schema_documents_bearer_auth(schema):
    schemes = schema["components"].get("securitySchemes", {})
    assert any(s.get("scheme") == "bearer" for s in schemes.values()), schemes


def test_schema_never_describes_a_key_field(schema):
    for name, component in schema["components"]["schemas"].items():
        if not name.startswith(("ModelConfig", "PatchedModelConfig")):
            continue
        keyish = {p for p in component.get("properties", {}) if "key" in p}
        assert keyish <= {"api_key_env", "api_key_configured"}, (name, keyish)


def test_path_parameters_are_typed(schema):
    def param_type(path):
        params = schema["paths"][path].get("parameters") or next(
            op["parameters"] for op in schema["paths"][path].values() if "parameters" in op
        )
        return next(p["schema"] for p in params if p["in"] == "path")

    assert param_type("/api/v1/characters/{id}/") == {"type": "string", "format": "uuid"}
    assert param_type("/api/v1/players/{id}/")["type"] == "integer"


def test_action_responses_match_what_is_sent(schema, api, conversation):
    """The messages and turns lists are not paginated; the schema must not say they are."""
    ops = schema["paths"]["/api/v1/conversations/{id}/messages/"]["get"]
    ref = ops["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(component["properties"]) == {"results"}
    body = api.get(f"/api/v1/conversations/{conversation.id}/messages").json()
    assert set(body) == {"results"}


def test_swagger_ui_is_served(db):
    response = APIClient().get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()
    assert b"/api/schema/" in response.content


def test_api_root_lists_the_resources(api):
    response = api.get("/api/v1/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {
        "model-configs", "characters", "players", "personas", "conversations", "presets",
        "scenarios", "workflow-tools/http", "workflow-tools/mcp", "regex-scripts",
        "instruct-templates", "plans", "moderation/cases",
    }  # fmt: skip
    for url in body.values():
        assert api.get(url).status_code == 200


@pytest.mark.parametrize(
    "path", ["/api/v1/.json", "/api/v1/characters.json", "/api/v1/characters/.json"]
)
def test_json_format_suffix_works(api, character, path):
    response = api.get(path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")


def test_format_suffix_on_a_detail_route(api, character):
    response = api.get(f"/api/v1/characters/{character.id}.json")
    assert response.status_code == 200 and response.json()["id"] == str(character.id)


@pytest.mark.parametrize(
    "path", ["/api/v1/characters.api", "/api/v1/characters.xml", "/api/v1/.yaml"]
)
def test_unknown_format_suffix_is_404(api, path):
    assert_error(api.get(path), 404, "not_found")


@pytest.mark.parametrize("accept", ["text/html", "application/xml", "image/png"])
def test_other_accept_headers_never_fail(api, character, accept):
    """Only JSON is rendered today (406 otherwise); a browsable renderer may come back, so
    either answer is fine, a 500 is not."""
    for path in ("/api/v1/", "/api/v1/characters/", f"/api/v1/characters/{character.id}/"):
        response = api.get(path, HTTP_ACCEPT=accept)
        if response.status_code != 200:
            assert_error(response, 406, "not_acceptable")


def test_unknown_api_path_is_json_404(api):
    response = api.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_bad_host_on_an_api_path_is_json_400(api):
    # Django refuses the Host before any view (DisallowedHost): the API still answers in its
    # one error format, the console keeps Django's page.
    response = api.get("/api/v1/players/", HTTP_HOST="Wfes9_")
    assert_error(response, 400, "bad_request")
    page = api.get("/console/", HTTP_HOST="Wfes9_")
    assert page.status_code == 400 and not page["Content-Type"].startswith("application/json")
