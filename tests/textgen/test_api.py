"""Text-completion over REST: model configs with a wire, a template and samplers (bad values
are coded 4xx and write nothing), and imported SillyTavern templates (a bad file is 422
``instruct_template_invalid`` naming the field, fuzzed)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roleplay.models import ModelConfig
from roleplay.textgen.models import InstructTemplate
from tests.api.helpers import assert_error

CONFIGS = "/api/v1/model-configs/"
TEMPLATES = "/api/v1/instruct-templates/"
ST_INSTRUCT = {
    "name": "Metharme", "input_sequence": "<|user|>", "output_sequence": "<|model|>",
    "system_sequence": "", "stop_sequence": "</s>", "wrap": False, "macro": True,
    "names_behavior": "force", "activation_regex": "", "skip_examples": False,
    "output_suffix": "", "input_suffix": "", "system_suffix": "", "user_alignment_message": "",
    "system_same_as_user": True, "last_system_sequence": "", "first_input_sequence": "",
}  # fmt: skip


def config_body(**extra):
    return {"name": "kobold", "provider": "text_completion", "model": "any",
            "base_url": "http://127.0.0.1:5001", "wire": "koboldcpp", **extra}  # fmt: skip


@pytest.mark.django_db
def test_a_text_completion_config_with_samplers_round_trips(api):
    body = config_body(instruct_template="llama3", top_k=40, min_p=0.05, dry_multiplier=0.8,
                       mirostat_mode=2, mirostat_tau=5.0, repetition_penalty_range=512)  # fmt: skip
    response = api.post(CONFIGS, body, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["wire"] == "koboldcpp" and data["instruct_template"] == "llama3"
    assert data["top_k"] == 40 and data["min_p"] == 0.05 and data["mirostat_mode"] == 2
    assert data["typical_p"] is None and data["xtc_threshold"] is None
    changed = api.patch(f"{CONFIGS}{data['id']}/", {"top_k": None}, format="json")
    assert changed.status_code == 200 and changed.json()["top_k"] is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    "extra, field",
    [
        ({"min_p": 1.5}, "min_p"),
        ({"top_k": -1}, "top_k"),
        ({"top_k": 2.5}, "top_k"),
        ({"xtc_threshold": 0.9}, "xtc_threshold"),
        ({"mirostat_mode": 3}, "mirostat_mode"),
        ({"dry_base": 0.5}, "dry_base"),
        ({"repetition_penalty": "high"}, "repetition_penalty"),
        ({"wire": "telnet"}, "wire"),
        ({"wire": ""}, "wire"),
        ({"instruct_template": "no-such"}, "instruct_template"),
        ({"base_url": ""}, "base_url"),
    ],
)
def test_bad_text_completion_values_are_400_naming_the_field(api, extra, field):
    response = api.post(CONFIGS, config_body(**extra), format="json")
    assert_error(response, 400, "validation_error")
    assert field in response.content.decode()
    assert not ModelConfig.objects.exists()


@pytest.mark.django_db
def test_an_imported_template_is_named_by_a_config_and_a_reimport_reaches_it(api):
    response = api.post(TEMPLATES, {"file": ST_INSTRUCT}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["name"] == "Metharme" and data["instruct"]["input_sequence"] == "<|user|>"
    assert data["context"] is None and "file" not in data
    created = api.post(CONFIGS, config_body(instruct_template="Metharme"), format="json")
    assert created.status_code == 201, created.content
    config = ModelConfig.objects.get(pk=created.json()["id"])
    assert config.template_body["instruct"]["output_sequence"] == "<|model|>"
    again = api.post(TEMPLATES, {"file": {**ST_INSTRUCT, "output_sequence": "<|bot|>"}},
                     format="json")  # fmt: skip
    assert again.status_code == 201 and InstructTemplate.objects.count() == 1
    config.refresh_from_db()
    assert config.template_body["instruct"]["output_sequence"] == "<|bot|>"
    listed = api.get(TEMPLATES).json()
    assert [t["name"] for t in listed["results"]] == ["Metharme"]
    assert api.delete(f"{TEMPLATES}{data['id']}/").status_code == 204


@pytest.mark.django_db
def test_a_context_template_and_a_master_export_import(api):
    context = {"name": "Ctx", "story_string": "{{#if system}}{{system}}\n{{/if}}",
               "chat_start": "", "example_separator": "", "use_stop_strings": False}  # fmt: skip
    assert api.post(TEMPLATES, {"file": context}, format="json").status_code == 201
    master = {"instruct": ST_INSTRUCT, "context": context}
    both = api.post(TEMPLATES, {"name": "Both", "file": master}, format="json")
    assert both.status_code == 201
    assert both.json()["instruct"] and both.json()["context"]["story_string"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, field",
    [
        ({"file": []}, "file"),
        ({"file": "ChatML"}, "file"),
        ({"file": {"output_sequence": "x"}}, "input_sequence"),
        ({"file": {**ST_INSTRUCT, "wrap": "yes"}}, "wrap"),
        ({"file": {**ST_INSTRUCT, "names_behavior": "sometimes"}}, "names_behavior"),
        ({"file": {**ST_INSTRUCT, "stop_sequence": ["</s>"]}}, "stop_sequence"),
        ({"file": {"story_string": 5}}, "story_string"),
        ({"file": {**ST_INSTRUCT, "name": ""}}, "name"),
        ({"name": "chatml", "file": ST_INSTRUCT}, "name"),
    ],
)
def test_a_bad_template_file_is_422_naming_the_field(api, body, field):
    response = api.post(TEMPLATES, body, format="json")
    assert_error(response, 422, "instruct_template_invalid")
    assert response.json()["error"]["details"]["field"] == field
    assert not InstructTemplate.objects.exists()


@pytest.mark.django_db
def test_a_body_without_a_file_or_with_unknown_fields_is_400(api):
    assert_error(api.post(TEMPLATES, {"name": "x"}, format="json"), 400, "validation_error")
    body = {"file": ST_INSTRUCT, "extra": 1}
    assert_error(api.post(TEMPLATES, body, format="json"), 400, "validation_error")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=16), inner, max_size=4)
    ),
    max_leaves=10,
)
KEYS = st.sampled_from(["input_sequence", "output_sequence", "story_string", "wrap", "name",
                        "instruct", "context", "names_behavior", "chat_template",
                        "eos_token"])  # fmt: skip


@pytest.mark.django_db
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(file=st.one_of(JSON, st.dictionaries(KEYS, JSON, max_size=5)))
def test_any_file_is_imported_or_refused_with_a_code_never_a_500(api, file):
    response = api.post(TEMPLATES, {"name": "fuzz", "file": file}, format="json")
    assert response.status_code in (201, 400, 422), response.content[:300]
    if response.status_code == 422:
        assert response.json()["error"]["code"] == "instruct_template_invalid"


@pytest.mark.django_db
def test_a_rename_or_new_file_reaches_the_configs_that_name_it(api):
    created = api.post(TEMPLATES, {"file": ST_INSTRUCT}, format="json").json()
    config_id = api.post(CONFIGS, config_body(instruct_template="Metharme"), format="json").json()
    body = {"name": "Pyg", "file": {**ST_INSTRUCT, "input_sequence": "<|in|>"}}
    changed = api.patch(f"{TEMPLATES}{created['id']}/", body, format="json")
    assert changed.status_code == 200, changed.content
    config = ModelConfig.objects.get(pk=config_id["id"])
    assert config.instruct_template == "Pyg"
    assert config.template_body["instruct"]["input_sequence"] == "<|in|>"
    bad = api.patch(f"{TEMPLATES}{created['id']}/", {"file": {"wrap": 1}}, format="json")
    assert_error(bad, 422, "instruct_template_invalid")
