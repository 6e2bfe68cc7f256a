"""A server that refuses JSON-schema ``response_format`` with a 400 is asked again for a
JSON object, then with no format; other requests and other errors are not retried."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from roleplay.llm.errors import ModelBadRequest
from roleplay.llm.gateway import Gateway
from roleplay.llm.scripted_server import Reply
from roleplay.llm.types import ModelRequest
from roleplay.models import ModelCall

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}


def refusing(*kinds: str):
    """A server that answers 400 to the ``response_format`` types in ``kinds``."""

    def answer(request: dict) -> Reply:
        kind = (request.get("response_format") or {}).get("type")
        if kind in kinds:
            return Reply(status=400, error_body={"error": {"message": f"{kind} unsupported"}})
        return Reply(content='{"ok": true}')

    return Reply.from_callable(answer)


def ask(tenant, model_config, response_format):
    gateway = Gateway(tenant, model_config, "story_init")
    request = ModelRequest(
        [{"role": "user", "content": "JSON please"}], response_format=response_format
    )
    return async_to_sync(gateway.complete)(request)


def test_json_schema_refused_then_json_object(tenant, model_config, llm):
    llm.default = refusing("json_schema")
    assert ask(tenant, model_config, SCHEMA).content == '{"ok": true}'
    kinds = [(r.get("response_format") or {}).get("type") for r in llm.requests]
    assert kinds == ["json_schema", "json_object"]
    assert ModelCall.objects.filter(purpose="story_init").count() == 2


def test_both_refused_then_no_format(tenant, model_config, llm):
    llm.default = refusing("json_schema", "json_object")
    assert ask(tenant, model_config, SCHEMA).content == '{"ok": true}'
    kinds = [(r.get("response_format") or {}).get("type") for r in llm.requests]
    assert kinds == ["json_schema", "json_object", None]


def test_a_400_without_a_schema_is_not_retried(tenant, model_config, llm):
    llm.default = refusing(None)
    with pytest.raises(ModelBadRequest):
        ask(tenant, model_config, None)
    assert len(llm.requests) == 1


def test_a_500_from_the_server_s_own_validation_falls_back_too(tenant, model_config, llm):
    """llama.cpp's Python server answers a json_schema format it does not take with a 500
    holding its validation error: asked once, not three times, then for a JSON object."""

    def answer(request: dict) -> Reply:
        if (request.get("response_format") or {}).get("type") == "json_schema":
            message = (
                "1 validation error:\n {'type': 'literal_error', 'loc': ('body', "
                "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}"
            )
            return Reply(status=500, error_body={"error": {"message": message}})
        return Reply(content='{"ok": true}')

    llm.default = Reply.from_callable(answer)
    assert ask(tenant, model_config, SCHEMA).content == '{"ok": true}'
    kinds = [(r.get("response_format") or {}).get("type") for r in llm.requests]
    assert kinds == ["json_schema", "json_object"]
