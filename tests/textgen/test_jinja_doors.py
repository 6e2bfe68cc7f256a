"""The model's own Jinja chat template through every door: a ``tokenizer_config.json``
imported over REST and in the console (kind ``jinja``; a template that does not parse or
raises is refused when saved, 422 ``instruct_template_invalid`` naming ``chat_template``,
nothing written), named by a config that then holds its copy, and the ``gguf`` choice that
reads the bundled model's file (refused with a reason when the file has no template)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roleplay.llm.bundled import local_model_available
from roleplay.models import ModelConfig
from roleplay.textgen.models import InstructTemplate
from tests.api.helpers import assert_error
from tests.textgen.gguf_files import gguf_bytes
from tests.textgen.test_console import signed_in

pytestmark = pytest.mark.django_db

CONFIGS = "/api/v1/model-configs/"
TEMPLATES = "/api/v1/instruct-templates/"
HERE = Path(__file__).parent / "chat_templates"
GEMMA2 = (HERE / "gemma2.jinja").read_text()
TOKENIZER_CONFIG = {
    "add_bos_token": True, "bos_token": "<bos>", "chat_template": GEMMA2,
    "eos_token": {"content": "<eos>", "lstrip": False, "normalized": False},
    "model_max_length": 8192, "tokenizer_class": "GemmaTokenizer",
}  # fmt: skip


def config_body(**extra):
    return {"name": "llamacpp", "provider": "text_completion", "model": "any",
            "base_url": "http://127.0.0.1:8080", "wire": "llamacpp", **extra}  # fmt: skip


def test_a_tokenizer_config_imports_as_a_jinja_template_a_config_names(api):
    response = api.post(TEMPLATES, {"name": "Gemma 2", "file": TOKENIZER_CONFIG}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["kind"] == "jinja" and data["instruct"] is None and data["context"] is None
    assert data["jinja"]["template"] == GEMMA2 and data["jinja"]["eos_token"] == "<eos>"
    created = api.post(CONFIGS, config_body(instruct_template="Gemma 2"), format="json")
    assert created.status_code == 201, created.content
    config = ModelConfig.objects.get(pk=created.json()["id"])
    assert config.template_body == {"jinja": data["jinja"]}
    again = {"name": "Gemma 2", "file": {**TOKENIZER_CONFIG, "eos_token": "<end>"}}
    assert api.post(TEMPLATES, again, format="json").status_code == 201
    config.refresh_from_db()
    assert config.template_body["jinja"]["eos_token"] == "<end>"


@pytest.mark.parametrize(
    "chat_template",
    [
        "{% for message in messages %}{{ message.content }}",
        "{{ raise_exception('This template refuses every chat') }}",
        "{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}{% endfor %}",
        "{{ 'x' * 1000000000 }}",
        [{"name": "default"}],
    ],
)
def test_a_template_that_cannot_be_used_is_refused_when_saved(api, chat_template):
    body = {"name": "Bad", "file": {**TOKENIZER_CONFIG, "chat_template": chat_template}}
    response = api.post(TEMPLATES, body, format="json")
    assert_error(response, 422, "instruct_template_invalid")
    assert response.json()["error"]["details"]["field"] == "chat_template"
    assert not InstructTemplate.objects.exists()


def test_the_own_templates_name_is_reserved(api):
    response = api.post(TEMPLATES, {"name": "gguf", "file": TOKENIZER_CONFIG}, format="json")
    assert_error(response, 422, "instruct_template_invalid")
    assert response.json()["error"]["details"]["field"] == "name"


@pytest.mark.skipif(not local_model_available(), reason="the bundled model is not installed")
def test_the_bundled_base_models_file_has_no_template_and_the_choice_says_so(api):
    response = api.post(CONFIGS, config_body(instruct_template="gguf"), format="json")
    assert_error(response, 400, "validation_error")
    assert "carries no chat template" in response.content.decode()
    assert not ModelConfig.objects.exists()


def test_the_gguf_choice_reads_the_model_files_own_template(api, tmp_path, monkeypatch):
    model_file = tmp_path / "chat-model.gguf"
    model_file.write_bytes(gguf_bytes({
        "tokenizer.ggml.tokens": ["<pad>", "<eos>", "<bos>"],
        "tokenizer.ggml.bos_token_id": 2, "tokenizer.ggml.eos_token_id": 1,
        "tokenizer.chat_template": GEMMA2,
    }))  # fmt: skip
    monkeypatch.setattr("roleplay.llm.configs.services.bundled_model_path", lambda: model_file)
    response = api.post(CONFIGS, config_body(instruct_template="gguf"), format="json")
    assert response.status_code == 201, response.content
    config = ModelConfig.objects.get(pk=response.json()["id"])
    assert config.instruct_template == "gguf"
    assert config.template_body["jinja"] == {
        "template": GEMMA2, "bos_token": "<bos>", "eos_token": "<eos>", "name": "chat-model",
    }  # fmt: skip


def test_the_console_imports_a_pasted_tokenizer_config_and_refuses_a_bad_one(tenant):
    client = signed_in(tenant, "admin")
    page = "/console/models/templates/"
    response = client.post(page, {"text": json.dumps(TOKENIZER_CONFIG), "name": "Gemma"})
    assert response.status_code == 302
    assert InstructTemplate.objects.get(tenant=tenant).kind == "jinja"
    assert "Jinja chat template" in client.get(page).content.decode()
    bad = {**TOKENIZER_CONFIG, "chat_template": "{{ raise_exception('no system') }}"}
    refused = client.post(page, {"text": json.dumps(bad), "name": "Bad"})
    assert refused.status_code == 422
    assert "instruct_template_invalid" in refused.content.decode()
    assert "no system" in refused.content.decode()
    assert InstructTemplate.objects.count() == 1
