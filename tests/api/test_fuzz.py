"""Property: random JSON bodies on every write route never cause a 5xx, and a 4xx writes nothing.

Bodies are drawn from two sources: arbitrary JSON documents, and objects whose keys are the
route's real field names (read from the OpenAPI schema) with values that are sometimes of the
declared type and length and sometimes anything at all, so validation is exercised deeply and
not only at the "expected an object" gate.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.helpers import db_snapshot, route_cases, snapshot_diff

WRITES = route_cases(lambda route, method: method in ("POST", "PUT", "PATCH"))

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["", "0", "-1", "null", "true", "00000000-0000-0000-0000-000000000000",
                     "llama_cpp", "openai_compatible", "http://127.0.0.1:9/v1", "\x00", "é" * 201,
                     "\ud800", "a\udfffb", "\udbff"]),
)  # fmt: skip
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)


@lru_cache(maxsize=1)
def _schema() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def _request_properties(template: str, method: str) -> dict:
    """``properties`` of the route's JSON request body in the OpenAPI schema ({} if none)."""
    schema = _schema()
    for path, operations in schema["paths"].items():
        normalized = re.sub(r"\{[^}]+\}", "{id}", path).rstrip("/")
        if normalized != re.sub(r"\{[^}]+\}", "{id}", template).rstrip("/"):
            continue
        body = operations.get(method.lower(), {}).get("requestBody", {})
        ref = body.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")
        if ref:
            return schema["components"]["schemas"][ref.rsplit("/", 1)[1]].get("properties", {})
    return {}


def _typed(prop: dict):
    """Values of the declared type, near its limits."""
    kind = prop.get("type")
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    if kind == "string":
        limit = prop.get("maxLength", 300)
        at_the_limit = st.builds(
            lambda char, delta: char * (limit + delta), st.characters(), st.integers(-1, 1)
        )
        return st.one_of(st.text(max_size=min(limit, 40)), at_the_limit)
    if kind == "integer":
        low, high = prop.get("minimum", -(2**40)), prop.get("maximum", 2**40)
        return st.integers(min_value=int(low) - 2, max_value=int(high) + 2)
    if kind == "number":
        return st.floats(min_value=-10, max_value=10, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(_typed(prop.get("items", {})) | scalars, max_size=5)
    return json_values


def body_strategy(template: str, method: str):
    props = _request_properties(template, method)
    if not props:
        return json_values
    fields = {name: st.one_of(_typed(prop), json_values) for name, prop in props.items()}
    shaped = st.fixed_dictionaries({}, optional=fields)
    with_extra = st.builds(
        lambda known, extra: {**extra, **known},
        shaped,
        st.dictionaries(st.text(max_size=8), scalars, max_size=2),
    )
    return st.one_of(shaped, with_extra, json_values)


# Writes that take no body (an empty object, which the fuzzer still sends junk to).
BODILESS = {
    "conversation-ws-ticket",
    "imageconfig-test",
    "conversation-delete-last",
    "player-memory-clear",
    "player-memory-job-retry",
    "player-memory-job-cancel",
    "modelconfig-test",
    "mcpserver-test",
    "backups",  # POST /api/v1/backups: an export of the whole tenant, no fields
}


def test_every_write_route_has_a_body_schema():
    """The fuzzer is only as deep as the schema: each write route documents its body."""
    for param in WRITES:
        route, method = param.values
        if route.name in BODILESS:
            continue
        assert _request_properties(route.template, method), param.id


@pytest.mark.parametrize(("route", "method"), WRITES)
@settings(
    max_examples=35,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_random_bodies_never_5xx_and_4xx_writes_nothing(api, own, route, method, data):
    body = data.draw(body_strategy(route.template, method), label="body")
    # A key makes the body's fingerprint part of the request (taken before validation).
    key = data.draw(st.none() | st.text(max_size=8).map(lambda t: "k" + t), label="key")
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    path = route.path_in(own)
    before = db_snapshot()
    response = api.generic(
        method, path, json.dumps(body), content_type="application/json", **headers
    )
    assert response.status_code < 500, response.content[:500]
    if 400 <= response.status_code < 500:
        error = response.json()["error"]
        assert error["code"] and error["message"]
        assert snapshot_diff(before, db_snapshot()) == []
