"""Model configs: a key value is never stored nor returned, only the name of its env var."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.secrets import looks_like_key
from tests.api.helpers import assert_error, error_locs

SECRET = "sk-live-7f3a9c1e5b2d4f6a8c0e2b4d6f8a0c2e"


def _config(**overrides):
    body = {
        "name": "remote",
        "provider": "openai_compatible",
        "model": "gpt-x",
        "base_url": "http://127.0.0.1:9/v1",
        "context_limit": 8192,
        "max_output_tokens": 512,
    }
    body.update(overrides)
    return body


def test_key_value_is_never_returned(api, monkeypatch):
    monkeypatch.setenv("REMOTE_KEY", SECRET)
    created = api.post("/api/v1/model-configs/", _config(api_key_env="REMOTE_KEY"), format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["api_key_env"] == "REMOTE_KEY"
    assert body["api_key_configured"] is True
    pk = body["id"]
    responses = [
        created,
        api.get("/api/v1/model-configs/"),
        api.get(f"/api/v1/model-configs/{pk}/"),
        api.patch(f"/api/v1/model-configs/{pk}/", {"temperature": 0.1}, format="json"),
        api.options(f"/api/v1/model-configs/{pk}/"),
    ]
    for response in responses:
        assert response.status_code == 200 or response.status_code == 201
        assert SECRET.encode() not in response.content
        assert b"sk-live" not in response.content


def test_api_key_configured_follows_the_environment(api, monkeypatch):
    monkeypatch.delenv("MISSING_KEY_ENV", raising=False)
    body = api.post(
        "/api/v1/model-configs/", _config(api_key_env="MISSING_KEY_ENV"), format="json"
    ).json()
    assert body["api_key_configured"] is False
    monkeypatch.setenv("MISSING_KEY_ENV", "value")
    assert api.get(f"/api/v1/model-configs/{body['id']}/").json()["api_key_configured"] is True
    local = api.post(
        "/api/v1/model-configs/",
        _config(name="local", provider="llama_cpp", base_url=""),
        format="json",
    ).json()
    assert local["api_key_env"] == "" and local["api_key_configured"] is False


def test_the_stored_row_holds_no_key(api, monkeypatch):
    from roleplay.models import ModelConfig

    monkeypatch.setenv("REMOTE_KEY", SECRET)
    api.post("/api/v1/model-configs/", _config(api_key_env="REMOTE_KEY"), format="json")
    row = ModelConfig.objects.get(name="remote")
    stored = " ".join(str(getattr(row, f.attname)) for f in row._meta.concrete_fields)
    assert SECRET not in stored


@pytest.mark.parametrize(
    "value",
    [
        SECRET,
        "sk_live_abcdefghijklmnopqrstuvwx",
        "sk-ant-api03-abcdefghijklmnop",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "hf_abcdefghijklmnopqrstuvwxyz123456",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-123-456-abc",
        "MY_KEY_3f8a9c1e5b2d4f6a8c0e2b4d6f8a",
        "Bearer abc",
        "name with spaces",
        "1STARTS_WITH_DIGIT",
        "X" * 101,
    ],
)
def test_key_like_api_key_env_is_rejected(api, value):
    from roleplay.models import ModelConfig

    response = api.post("/api/v1/model-configs/", _config(api_key_env=value), format="json")
    assert "api_key_env" in error_locs(response)
    assert not ModelConfig.objects.filter(name="remote").exists()
    assert value.encode() not in response.content


@pytest.mark.parametrize("value", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "my_local_key", "K2"])
def test_env_var_names_are_accepted(api, value):
    response = api.post("/api/v1/model-configs/", _config(api_key_env=value), format="json")
    assert response.status_code == 201, response.content
    assert response.json()["api_key_env"] == value


def test_key_like_value_is_rejected_on_update_too(api, own):
    response = api.patch(
        f"/api/v1/model-configs/{own.model_config.id}/", {"api_key_env": SECRET}, format="json"
    )
    assert "api_key_env" in error_locs(response)
    own.model_config.refresh_from_db()
    assert own.model_config.api_key_env == "SOME_KEY_ENV"


@pytest.mark.parametrize(
    "extra",
    [5, "text", [1, 2], {"headers": {"Authorization": "Bearer x"}}, {"api_key": "x"}],
)
def test_extra_must_be_an_object_without_credentials(api, extra):
    response = api.post("/api/v1/model-configs/", _config(extra=extra), format="json")
    assert "extra" in error_locs(response)


@given(
    prefix=st.sampled_from(["sk-", "sk_", "ghp_", "hf_", "AKIA", "glpat-"]),
    tail=st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=16),
)
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generated_keys_look_like_keys(prefix, tail):
    assert looks_like_key(prefix + tail)


@pytest.mark.parametrize(
    "body, field",
    [
        (_config(base_url=""), "base_url"),
        (_config(max_output_tokens=8192), "max_output_tokens"),
        (_config(provider="anthropic"), "provider"),
        (_config(temperature=3), "temperature"),
        (_config(top_p=-0.1), "top_p"),
        (_config(timeout_ms=1), "timeout_ms"),
        (_config(context_limit=10), "context_limit"),
        (_config(base_url="not a url"), "base_url"),
    ],
)
def test_invalid_model_config_fields(api, body, field):
    from roleplay.models import ModelConfig

    assert field in error_locs(api.post("/api/v1/model-configs/", body, format="json"))
    assert not ModelConfig.objects.exists()


def test_one_default_per_tenant(api, own, model_config):
    assert model_config.is_default
    created = api.post("/api/v1/model-configs/", _config(is_default=True), format="json")
    assert created.status_code == 201 and created.json()["is_default"] is True
    model_config.refresh_from_db()
    assert model_config.is_default is False
    # Switching back through an update clears the other one again.
    api.patch(f"/api/v1/model-configs/{model_config.id}/", {"is_default": True}, format="json")
    listed = api.get("/api/v1/model-configs/").json()["results"]
    assert [row["name"] for row in listed if row["is_default"]] == [model_config.name]


def test_content_scope_reads_but_cannot_write_configs(content_api, own):
    assert content_api.get("/api/v1/model-configs/").status_code == 200
    assert_error(
        content_api.post("/api/v1/model-configs/", _config(), format="json"), 403, "forbidden"
    )


def test_extra_with_ordinary_parameters_is_kept(api):
    extra = {"max_tokens": 64, "top_k": 40, "stop": ["\n\n"], "logit_bias": {"50256": -100}}
    response = api.post("/api/v1/model-configs/", _config(extra=extra), format="json")
    assert response.status_code == 201, response.content
    assert response.json()["extra"] == extra


@pytest.mark.parametrize(
    "start, change, field",
    [
        ({"provider": "llama_cpp", "base_url": ""}, {"provider": "openai_compatible"}, "base_url"),
        ({"context_limit": 4096}, {"max_output_tokens": 4096}, "max_output_tokens"),
        ({"max_output_tokens": 512}, {"context_limit": 512}, "max_output_tokens"),
    ],
)
def test_rules_across_fields_hold_for_partial_updates(api, start, change, field):
    """A PATCH is checked against the stored values of the fields it does not send."""
    from roleplay.models import ModelConfig

    created = api.post("/api/v1/model-configs/", _config(**start), format="json")
    assert created.status_code == 201, created.content
    pk = created.json()["id"]
    before = ModelConfig.objects.get(pk=pk)
    assert field in error_locs(api.patch(f"/api/v1/model-configs/{pk}/", change, format="json"))
    after = ModelConfig.objects.get(pk=pk)
    assert (after.provider, after.context_limit, after.max_output_tokens) == (
        before.provider,
        before.context_limit,
        before.max_output_tokens,
    )


def test_api_key_env_is_stored_trimmed(api):
    response = api.post("/api/v1/model-configs/", _config(api_key_env="  MY_KEY  "), format="json")
    assert response.status_code == 201, response.content
    assert response.json()["api_key_env"] == "MY_KEY"


def test_is_default_false_stops_being_the_default(api, model_config):
    response = api.patch(
        f"/api/v1/model-configs/{model_config.id}/", {"is_default": False}, format="json"
    )
    assert response.status_code == 200 and response.json()["is_default"] is False
    model_config.refresh_from_db()
    assert model_config.is_default is False


def test_the_test_action_runs_one_completion(api, tenant, model_config, llm):
    from roleplay.llm.scripted_server import Reply
    from roleplay.models import ModelCall

    llm.enqueue(Reply(content="Hello there, kind traveller friend."))
    response = api.post(f"/api/v1/model-configs/{model_config.pk}/test/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["ok"] is True and body["text"] == "Hello there, kind traveller friend."
    assert body["model"] == "scripted-model" and body["error_code"] is None
    assert ModelCall.objects.get(tenant=tenant, purpose="console_test").outcome == "ok"


def test_a_failed_test_names_the_models_the_server_lists(api, model_config, llm):
    from roleplay.llm.scripted_server import Reply

    llm.default = Reply(status=404, error_body={"error": {"message": "no such model"}})
    body = api.post(f"/api/v1/model-configs/{model_config.pk}/test/").json()
    assert body["ok"] is False and body["error_code"] == "model_bad_request"
    assert body["offered_models"] == ["scripted-model"]


def test_the_test_action_needs_the_admin_scope_and_the_tenant(content_api, other_api, model_config):
    assert content_api.post(f"/api/v1/model-configs/{model_config.pk}/test/").status_code == 403
    assert_error(other_api.post(f"/api/v1/model-configs/{model_config.pk}/test/"), 404, "not_found")


def test_the_message_order_is_a_choice(api):
    created = api.post("/api/v1/model-configs/", _config(role_order="strict"), format="json")
    assert created.status_code == 201 and created.json()["role_order"] == "strict"
    assert (
        api.post("/api/v1/model-configs/", _config(name="b"), format="json").json()["role_order"]
        == "auto"
    )
    refused = api.post("/api/v1/model-configs/", _config(name="c", role_order="x"), format="json")
    assert "role_order" in error_locs(refused)
