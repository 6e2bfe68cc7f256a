"""Prompt caching: a model config asks its server to cache (``cache_prompt`` only when the
config says so), the cached prompt tokens a server reports land on each ``ModelCall``
(streamed and not), and each config's cache hit rate is read over its recent calls (the
console's pages: tests/console/test_model_configs.py)."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from roleplay.llm.configs.selectors import cache_stats
from roleplay.llm.gateway import Gateway
from roleplay.llm.scripted_server import Reply
from roleplay.llm.types import ModelRequest
from roleplay.models import ModelCall

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "user", "content": "Hello there."}]


def complete(tenant, config):
    return async_to_sync(Gateway(tenant, config, "chat").complete)(ModelRequest(MESSAGES))


def stream(tenant, config):
    async def run():
        return [
            event async for event in Gateway(tenant, config, "chat").stream(ModelRequest(MESSAGES))
        ]

    return async_to_sync(run)()


def test_cached_tokens_of_a_completion_land_on_its_model_call(tenant, model_config, llm):
    llm.enqueue(
        Reply(content="Hi.", usage={"prompt_tokens": 120, "completion_tokens": 3}, cached_tokens=96)
    )
    result = complete(tenant, model_config)
    assert result.usage.cached_tokens == 96
    call = ModelCall.objects.get(tenant=tenant, purpose="chat")
    assert (call.input_tokens, call.cached_tokens) == (120, 96)


def test_cached_tokens_of_a_stream_land_on_its_model_call(tenant, model_config, llm):
    llm.enqueue(
        Reply(
            content="Hi there.",
            usage={"prompt_tokens": 80, "completion_tokens": 2},
            cached_tokens=64,
        )
    )
    stream(tenant, model_config)
    assert llm.requests[-1]["stream_options"] == {"include_usage": True}
    call = ModelCall.objects.get(tenant=tenant, purpose="chat")
    assert (call.input_tokens, call.cached_tokens) == (80, 64)


def test_deepseeks_cache_hit_count_is_read_too(tenant, model_config, llm):
    usage = {"prompt_tokens": 50, "completion_tokens": 2, "prompt_cache_hit_tokens": 32}
    llm.enqueue(Reply(content="Hi.", usage=usage))
    complete(tenant, model_config)
    assert ModelCall.objects.get(tenant=tenant, purpose="chat").cached_tokens == 32


def test_a_server_that_reports_no_cache_records_zero(tenant, model_config, llm):
    llm.enqueue(Reply(content="Hi."))
    complete(tenant, model_config)
    assert ModelCall.objects.get(tenant=tenant, purpose="chat").cached_tokens == 0


@pytest.mark.parametrize(
    ("prompt_cache", "sent"),
    [("auto", None), ("on", True), ("off", False)],
)
def test_cache_prompt_is_sent_only_when_the_config_says_so(
    tenant, model_config, llm, prompt_cache, sent
):
    model_config.prompt_cache = prompt_cache
    model_config.save()
    complete(tenant, model_config)
    stream(tenant, model_config)
    for request in llm.requests:
        assert request.get("cache_prompt") is sent
        assert ("cache_prompt" in request) is (sent is not None)


def test_a_hosted_cache_hint_in_extra_is_passed_through(tenant, model_config, llm):
    model_config.extra = {"prompt_cache_key": "tavern-42"}
    model_config.save()
    complete(tenant, model_config)
    assert llm.requests[-1]["prompt_cache_key"] == "tavern-42"
    assert "cache_prompt" not in llm.requests[-1]


def test_a_strict_server_refusing_cache_prompt_is_asked_again_without_it(tenant, model_config, llm):
    model_config.prompt_cache = "on"
    model_config.save()

    def strict(request: dict) -> Reply:
        if "cache_prompt" in request:
            message = "Unrecognized request argument supplied: cache_prompt"
            return Reply(status=400, error_body={"error": {"message": message}})
        return Reply(content="Fine.")

    llm.default = Reply.from_callable(strict)
    assert complete(tenant, model_config).content == "Fine."
    assert ["cache_prompt" in r for r in llm.requests] == [True, False]


def test_the_hit_rate_is_cached_over_prompt_tokens_of_recent_calls(tenant, model_config, llm):
    for cached in (0, 90, 90):
        llm.enqueue(
            Reply(
                content="Hi.",
                usage={"prompt_tokens": 100, "completion_tokens": 1},
                cached_tokens=cached,
            )
        )
        complete(tenant, model_config)
    stats = cache_stats(tenant, [model_config.pk])[model_config.pk]
    assert (stats.calls, stats.prompt_tokens, stats.cached_tokens) == (3, 300, 180)
    assert stats.hit_rate == pytest.approx(0.6)


def test_the_rest_representation_carries_the_hit_rate_and_the_setting(
    api_client_for, tenant, model_config, llm
):
    admin_api = api_client_for(tenant)
    llm.enqueue(
        Reply(content="Hi.", usage={"prompt_tokens": 40, "completion_tokens": 1}, cached_tokens=10)
    )
    complete(tenant, model_config)
    body = admin_api.get(f"/api/v1/model-configs/{model_config.pk}/").json()
    assert body["prompt_cache"] == "auto"
    assert body["cache"] == {
        "calls": 1,
        "prompt_tokens": 40,
        "cached_tokens": 10,
        "hit_rate": 0.25,
    }
