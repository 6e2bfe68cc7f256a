"""Bad input is a clear 4xx in the one error format, never a 500 and never a partial write."""

from __future__ import annotations

import json

import pytest

from console.body_limit import RUNTIME_MAX_BODY_BYTES
from tests.api.helpers import (
    assert_error,
    db_snapshot,
    error_locs,
    route_cases,
    snapshot_diff,
    valid_body,
)

WRITES = route_cases(lambda route, method: method in ("POST", "PUT", "PATCH"))


def _path(route, own):
    return route.path_in(own)


def _raw(client, method, path, data: str | bytes, content_type="application/json"):
    return client.generic(method, path, data, content_type=content_type)


@pytest.mark.parametrize(("route", "method"), WRITES)
@pytest.mark.parametrize(
    "payload",
    ['{"name": ', "{'single': 'quotes'}", "{bad", "[1, 2", '{"a": NaN}', '{"a": Infinity}',
     b'{"name": "\xff\xfe"}', '{"a": 1e400}', '{"a": 123456789012345678901234567890}',
     "[" * 50_000 + "]" * 50_000, '{"a":' * 100 + "1" + "}" * 100],
    ids=["truncated", "single-quotes", "bare", "open-list", "nan", "infinity", "bad-utf8",
         "overflow-float", "huge-int", "deep-list", "deep-object"],
)  # fmt: skip
def test_malformed_json_is_invalid_json(api, own, route, method, payload):
    before = db_snapshot()
    response = _raw(api, method, _path(route, own), payload)
    if route.name == "conversation-ws-ticket":
        assert response.status_code in (201, 400)  # issuing a ticket reads no body
    else:
        assert_error(response, 400, "invalid_json")
        assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize(("route", "method"), WRITES)
def test_unknown_fields_are_named(api, own, route, method):
    if route.name == "conversation-ws-ticket":
        pytest.skip("takes no body")
    body = {**valid_body(route, method, own), "surprise_field": 1, "zz_top": "x"}
    before = db_snapshot()
    locs = error_locs(_raw(api, method, _path(route, own), json.dumps(body)))
    assert {"surprise_field", "zz_top"} <= locs
    assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize(("route", "method"), WRITES)
@pytest.mark.parametrize("body", ["[]", "[{}]", '"text"', "42", "true"])
def test_a_body_that_is_not_an_object_is_rejected(api, own, route, method, body):
    if route.name == "conversation-ws-ticket":
        pytest.skip("takes no body")
    before = db_snapshot()
    assert_error(_raw(api, method, _path(route, own), body), 400, "validation_error")
    assert snapshot_diff(before, db_snapshot()) == []


WRONG_TYPES = [
    ("/api/v1/characters/", {"name": ["a"]}, "name"),
    ("/api/v1/characters/", {"name": True}, "name"),
    ("/api/v1/characters/", {"name": {"x": 1}}, "name"),
    ("/api/v1/characters/", {"name": "ok", "model_config": 1.5}, "model_config"),
    ("/api/v1/characters/", {"name": "ok", "model_config": "not-a-uuid"}, "model_config"),
    ("/api/v1/characters/", {"name": "ok", "model_config": ["x"]}, "model_config"),
    ("/api/v1/players/", {"external_id": None}, "external_id"),
    ("/api/v1/players/", {"external_id": ""}, "external_id"),
    ("/api/v1/model-configs/", {"name": "m", "provider": "llama_cpp", "model": "m",
                                "context_limit": "lots"}, "context_limit"),
    ("/api/v1/model-configs/", {"name": "m", "provider": "llama_cpp", "model": "m",
                                "temperature": "hot"}, "temperature"),
    ("/api/v1/model-configs/", {"name": "m", "provider": "llama_cpp", "model": "m",
                                "is_default": "maybe"}, "is_default"),
    ("/api/v1/model-configs/", {"name": "m", "provider": 3, "model": "m"}, "provider"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body", "field"), WRONG_TYPES)
def test_wrong_types_are_named(api, own, path, body, field):
    before = db_snapshot()
    assert field in error_locs(api.post(path, body, format="json"))
    assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize("field", ["player", "character"])
@pytest.mark.parametrize("value", [True, 1.0, [1], {"id": 1}, None, "", "zzz"])
def test_conversation_ids_of_the_wrong_type(api, own, field, value):
    body = {"player": own.player.id, "character": str(own.character.id), field: value}
    before = db_snapshot()
    assert field in error_locs(api.post("/api/v1/conversations/", body, format="json"))
    assert snapshot_diff(before, db_snapshot()) == []


OVER_LONG = [
    ("/api/v1/characters/", "name", 201, {}),
    ("/api/v1/characters/", "description", 100_001, {"name": "n"}),
    ("/api/v1/characters/", "first_message", 20_001, {"name": "n"}),
    ("/api/v1/characters/", "example_dialogues", 50_001, {"name": "n"}),
    ("/api/v1/players/", "external_id", 201, {}),
    ("/api/v1/players/", "display_name", 201, {"external_id": "x"}),
    ("/api/v1/model-configs/", "name", 101, {"provider": "llama_cpp", "model": "m"}),
    ("/api/v1/model-configs/", "model", 201, {"name": "n", "provider": "llama_cpp"}),
    ("/api/v1/model-configs/", "base_url", 501, {"name": "n", "provider": "openai_compatible",
                                                 "model": "m"}),
]  # fmt: skip


@pytest.mark.parametrize(("path", "field", "length", "rest"), OVER_LONG)
def test_over_long_strings_are_named(api, path, field, length, rest):
    value = ("http://h/" + "a" * length) if field == "base_url" else "é" * length
    before = db_snapshot()
    assert field in error_locs(api.post(path, {**rest, field: value}, format="json"))
    assert snapshot_diff(before, db_snapshot()) == []


def test_strings_at_the_limit_are_accepted(api):
    body = {"name": "n" * 200, "description": "d" * 100_000, "first_message": "f" * 20_000}
    assert api.post("/api/v1/characters/", body, format="json").status_code == 201


@pytest.mark.parametrize("text", ["a\x00b", "\ud800"])
def test_unstorable_characters_are_rejected(api, text):
    before = db_snapshot()
    # json.dumps writes both as \\u escapes, the way a client sends them.
    body = json.dumps({"name": text})
    assert "name" in error_locs(_raw(api, "POST", "/api/v1/characters/", body))
    body = {"name": "m", "provider": "llama_cpp", "model": "m", "extra": {"k": "a\x00b"}}
    assert "extra" in error_locs(api.post("/api/v1/model-configs/", body, format="json"))
    assert snapshot_diff(before, db_snapshot()) == []


@pytest.mark.parametrize(("route", "method"), WRITES)
def test_huge_body_is_413(api, own, route, method):
    # Over the route's own limit (2 MiB but where a route declares more: a model config's
    # write carries a tokenizer.json).
    limit = getattr(route.view_class, "max_body_bytes", RUNTIME_MAX_BODY_BYTES)
    body = json.dumps({"name": "x" * (limit + 1024 * 1024)})
    before = db_snapshot()
    assert_error(_raw(api, method, _path(route, own), body), 413, "payload_too_large")
    assert snapshot_diff(before, db_snapshot()) == []


def test_body_under_the_limit_but_too_long_is_a_validation_error(api):
    response = api.post("/api/v1/characters/", {"name": "x" * 1_500_000}, format="json")
    assert "name" in error_locs(response)


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "multipart/form-data"])
def test_other_media_types_are_415(api, content_type):
    response = api.generic("POST", "/api/v1/characters/", "name=x", content_type=content_type)
    assert_error(response, 415, "unsupported_media_type")


def test_unsupported_method_is_405(api, own):
    assert_error(api.delete("/api/v1/characters/"), 405, "method_not_allowed")
    assert_error(
        api.get(f"/api/v1/conversations/{own.conversation.id}/ws-ticket"), 405, "method_not_allowed"
    )


@pytest.mark.parametrize(
    "query",
    ["limit=abc", "limit=0", "limit=-5", "limit=1001", "limit=99999999999999999999", "limit=%00"],
)
def test_bad_message_limits(api, own, query):
    path = f"/api/v1/conversations/{own.conversation.id}/messages?{query}"
    assert "limit" in error_locs(api.get(path))


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("archive", {"keep_recent": -1}, "keep_recent"),
        ("archive", {"keep_recent": "x"}, "keep_recent"),
        ("archive", {}, "keep_recent"),
        ("rollback", {"timestamps": []}, "timestamps"),
        ("rollback", {"timestamps": "1"}, "timestamps"),
        ("rollback", {"timestamps": [True]}, "timestamps.0"),
        ("rollback", {"timestamps": [1.5]}, "timestamps.0"),
        ("rollback", {"timestamps": [-1]}, "timestamps.0"),
        ("rollback", {"timestamps": list(range(10_001))}, "timestamps"),
    ],
)
def test_bad_message_actions(api, own, path, body, field):
    before = db_snapshot()
    url = f"/api/v1/conversations/{own.conversation.id}/messages/{path}"
    assert field in error_locs(api.post(url, body, format="json"))
    assert snapshot_diff(before, db_snapshot()) == []
