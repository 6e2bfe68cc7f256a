"""Model config pages: CRUD, validation, key status, make default, the test button."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync

from roleplay.llm.configs.check import TEST_PROMPT
from roleplay.llm.gateway import Gateway
from roleplay.llm.scripted_server import Reply
from roleplay.llm.types import ModelRequest
from roleplay.models import ModelCall, ModelConfig

pytestmark = pytest.mark.django_db

SECRET = "sk-live-DO-NOT-SHOW-0123456789"


def _form(llm, **overrides):
    data = {
        "name": "Local vLLM",
        "provider": "openai_compatible",
        "model": "qwen-7b",
        "base_url": llm.base_url,
        "api_key_env": "",
        "context_limit": "8192",
        "max_output_tokens": "512",
        "temperature": "0.7",
        "top_p": "0.9",
        "timeout_ms": "30000",
        "extra": '{"top_k": 40}',
    }
    data.update(overrides)
    return data


def test_create_edit_delete_round_trip(admin_client, tenant, llm):
    response = admin_client.post("/console/models/new/", _form(llm))
    assert response.status_code == 302 and response["Location"] == "/console/models/"
    config = ModelConfig.objects.get(tenant=tenant, name="Local vLLM")
    assert (config.model, config.context_limit, config.top_p) == ("qwen-7b", 8192, 0.9)
    assert config.extra == {"top_k": 40} and not config.is_default

    page = admin_client.get(f"/console/models/{config.pk}/").content.decode()
    assert "qwen-7b" in page and "top_k" in page

    response = admin_client.post(
        f"/console/models/{config.pk}/",
        _form(llm, name="Renamed", extra="", temperature="1.5", provider="llama_cpp", base_url=""),
    )
    assert response.status_code == 302
    config.refresh_from_db()
    assert (config.name, config.extra, config.temperature) == ("Renamed", {}, 1.5)
    assert config.provider == "llama_cpp" and config.base_url == ""

    assert admin_client.get(f"/console/models/{config.pk}/delete/").status_code == 200
    response = admin_client.post(f"/console/models/{config.pk}/delete/")
    assert response.status_code == 302
    assert not ModelConfig.objects.filter(pk=config.pk).exists()


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"name": ""}, "name", "This field is required."),
        ({"extra": "{not json"}, "extra", "Enter a valid JSON."),
        ({"extra": "[1, 2]"}, "extra", "Must be a JSON object"),
        ({"extra": '{"headers": {"Authorization": "x"}}'}, "extra", "Credentials do not"),
        ({"api_key_env": SECRET}, "api_key_env", "environment variable NAME"),
        ({"base_url": ""}, "base_url", "Required for OpenAI-compatible servers."),
        ({"base_url": "not a url"}, "base_url", "Enter a valid URL."),
        ({"max_output_tokens": "8192"}, "max_output_tokens", "smaller than the context limit"),
        ({"temperature": "2.5"}, "temperature", "less than or equal to 2.0"),
        ({"context_limit": "10"}, "context_limit", "greater than or equal to 256"),
        ({"provider": "gpt"}, "provider", "Select a valid choice."),
    ],
)
def test_validation_errors_are_shown(admin_client, tenant, llm, overrides, field, message):
    response = admin_client.post("/console/models/new/", _form(llm, **overrides))
    assert response.status_code == 400
    page = response.content.decode()
    assert f'id="id_{field}_errors"' in page
    errors = page[page.index(f'id="id_{field}_errors"') :]
    assert message in errors[: errors.index("</ul>")]
    assert not ModelConfig.objects.filter(tenant=tenant).exists()


def test_names_are_unique_per_tenant_only(admin_client, tenant, model_config, foreign, llm):
    response = admin_client.post("/console/models/new/", _form(llm, name="scripted"))
    assert "already exists" in response.content.decode()
    # Another tenant's "theirs" does not block the same name here.
    assert admin_client.post("/console/models/new/", _form(llm, name="theirs")).status_code == 302
    assert ModelConfig.objects.filter(tenant=tenant).count() == 2


def test_key_status_is_shown_but_never_the_key(admin_client, model_config, monkeypatch):
    model_config.api_key_env = "CONSOLE_TEST_KEY"
    model_config.save()
    monkeypatch.delenv("CONSOLE_TEST_KEY", raising=False)
    page = admin_client.get("/console/models/").content.decode()
    assert "$CONSOLE_TEST_KEY" in page and ">not set<" in page
    monkeypatch.setenv("CONSOLE_TEST_KEY", SECRET)
    for url in ["/console/models/", f"/console/models/{model_config.pk}/"]:
        page = admin_client.get(url).content.decode()
        assert ">set<" in page and SECRET not in page, url


def test_make_default_switches_the_one_default(admin_client, tenant, model_config, llm):
    admin_client.post("/console/models/new/", _form(llm, name="second"))
    second = ModelConfig.objects.get(tenant=tenant, name="second")
    response = admin_client.post(f"/console/models/{second.pk}/default/")
    assert response.status_code == 302
    defaults = list(ModelConfig.objects.filter(tenant=tenant, is_default=True))
    assert defaults == [second]
    admin_client.post(f"/console/models/{model_config.pk}/default/")
    assert list(ModelConfig.objects.filter(tenant=tenant, is_default=True)) == [model_config]


def test_demo_configs_carry_the_demo_badge(admin_client, tenant):
    demo = ModelConfig.objects.create(
        tenant=tenant, name="Bundled", provider="llama_cpp", model="gemma", is_demo=True
    )
    for url in ["/console/models/", f"/console/models/{demo.pk}/"]:
        page = admin_client.get(url).content.decode()
        assert 'class="badge demo"' in page and "tiny local base model" in page, url


def test_the_test_button_runs_a_completion(operator_client, tenant, model_config, llm):
    llm.enqueue(Reply(content="Hello there, kind traveller friend."))
    response = operator_client.post(
        f"/console/models/{model_config.pk}/test/", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    fragment = response.content.decode()
    assert "<html" not in fragment  # an htmx fragment, not a page
    assert 'data-outcome="ok"' in fragment
    assert "Hello there, kind traveller friend." in fragment
    assert "scripted-model" in fragment and " ms" in fragment
    request = llm.requests[-1]
    assert request["messages"] == TEST_PROMPT and request["stream"] is True
    assert request.get("max_tokens", request.get("max_completion_tokens")) == 16
    call = ModelCall.objects.get(tenant=tenant, purpose="console_test")
    assert call.outcome == "ok" and call.config == model_config
    assert f"{call.input_tokens} in / {call.output_tokens} out" in fragment


def test_the_test_button_shows_a_server_error(admin_client, tenant, model_config, llm):
    llm.default = Reply(status=500, error_body={"error": {"message": "boom"}})
    response = admin_client.post(f"/console/models/{model_config.pk}/test/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "<html" in page  # without htmx the result comes as a whole page
    assert 'data-outcome="error"' in page and "model_server_error" in page
    call = ModelCall.objects.get(tenant=tenant, purpose="console_test")
    assert call.outcome == "error" and call.error_code == "model_server_error"
    assert call.attempts == 3  # the gateway's retries ran


def test_a_model_the_server_does_not_know_is_shown_beside_the_ones_it_lists(
    admin_client, tenant, model_config, llm
):
    ModelConfig.objects.filter(pk=model_config.pk).update(model="gpt-4o")
    message = "The model `gpt-4o` does not exist."
    llm.default = Reply(status=404, error_body={"error": {"message": message}})
    response = admin_client.post(f"/console/models/{model_config.pk}/test/", HTTP_HX_REQUEST="true")
    fragment = response.content.decode()
    assert 'data-outcome="error"' in fragment and "model_bad_request" in fragment
    assert "<code>gpt-4o</code> is not among the models this server lists" in fragment
    assert "<code>scripted-model</code>" in fragment


def test_a_server_that_is_not_there_lists_nothing(admin_client, tenant, model_config):
    ModelConfig.objects.filter(pk=model_config.pk).update(base_url="http://127.0.0.1:9/v1")
    response = admin_client.post(f"/console/models/{model_config.pk}/test/", HTTP_HX_REQUEST="true")
    fragment = response.content.decode()
    assert "model_connection_error" in fragment and "offered-models" not in fragment


def test_the_test_button_reports_an_unbuildable_provider(admin_client, tenant):
    broken = ModelConfig.objects.create(
        tenant=tenant,
        name="broken",
        provider="openai_compatible",
        model="m",
        base_url="",
        max_output_tokens=512,
        context_limit=8192,
        extra={"x": 1},
    )
    ModelConfig.objects.filter(pk=broken.pk).update(provider="nonsense")
    response = admin_client.post(f"/console/models/{broken.pk}/test/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "provider_unavailable" in response.content.decode()


def test_the_edit_form_round_trips_extra_as_json(admin_client, model_config):
    model_config.extra = {"stop": ["\n"], "n": 1}
    model_config.save()
    page = admin_client.get(f"/console/models/{model_config.pk}/").content.decode()
    start = page.index('name="extra"')
    textarea = page[start : page.index("</textarea>", start)]
    body = textarea[textarea.index(">") + 1 :]
    import html

    assert json.loads(html.unescape(body)) == {"stop": ["\n"], "n": 1}


def test_the_message_order_is_chosen_in_the_form(admin_client, tenant, llm):
    page = admin_client.get("/console/models/new/").content.decode()
    assert 'name="role_order"' in page and "Message order" in page
    response = admin_client.post("/console/models/new/", _form(llm, role_order="no_system"))
    assert response.status_code == 302
    assert ModelConfig.objects.get(tenant=tenant, name="Local vLLM").role_order == "no_system"


def test_an_empty_reply_and_a_refused_order_are_warned(admin_client, tenant, model_config, llm):
    def strict(request: dict) -> Reply:
        if request["messages"][0]["role"] == "system" and len(request["messages"]) > 1:
            if request["messages"][1]["role"] != "user":
                message = "Conversation roles must alternate user/assistant/user/assistant/..."
                return Reply(status=400, error_body={"error": {"message": message}})
        return Reply(content="")

    llm.default = Reply.from_callable(strict)
    response = admin_client.post(f"/console/models/{model_config.pk}/test/", HTTP_HX_REQUEST="true")
    fragment = response.content.decode()
    assert 'data-outcome="ok"' in fragment
    assert "The model answered with no text" in fragment
    assert "they are sent as &#x27;strict&#x27; from now on" in fragment


def test_the_console_shows_each_configs_hit_rate(admin_client, tenant, model_config, llm):
    llm.enqueue(
        Reply(
            content="Hi.", usage={"prompt_tokens": 200, "completion_tokens": 1}, cached_tokens=150
        )
    )
    request = ModelRequest([{"role": "user", "content": "Hello there."}])
    async_to_sync(Gateway(tenant, model_config, "chat").complete)(request)
    listing = admin_client.get("/console/models/").content.decode()
    assert 'id="cache-' + str(model_config.pk) + '"' in listing
    assert "75%" in listing and "150 of 200" in listing
    detail = admin_client.get(f"/console/models/{model_config.pk}/").content.decode()
    assert "75%" in detail
    calls = admin_client.get("/console/models/calls/").content.decode()
    assert "150 cached" in calls


def test_the_prompt_cache_is_chosen_in_the_form(admin_client, tenant, llm):
    page = admin_client.get("/console/models/new/").content.decode()
    assert 'name="prompt_cache"' in page and "Prompt cache" in page
    response = admin_client.post("/console/models/new/", _form(llm, prompt_cache="on"))
    assert response.status_code == 302
    assert ModelConfig.objects.get(tenant=tenant, name="Local vLLM").prompt_cache == "on"
