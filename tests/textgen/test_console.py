"""The console's text-completion pages: the model config form takes a wire, a template and
samplers (a bad sampler is a 400 naming the field, nothing saved); the instruct templates
page imports a SillyTavern file (a bad one is a 422 with its code, nothing saved) and deletes."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from console.services import ensure_console_user
from roleplay.models import ModelConfig
from roleplay.textgen.models import InstructTemplate

pytestmark = pytest.mark.django_db

PAGE = "/console/models/templates/"
ST_FILE = {"name": "Vicuna", "input_sequence": "USER:", "output_sequence": "ASSISTANT:",
           "wrap": True, "names_behavior": "none", "stop_sequence": "</s>"}  # fmt: skip


def signed_in(tenant, role: str) -> Client:
    user, _ = ensure_console_user(tenant, f"{role}-u", f"pw-{role}-123456", role)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin_client(tenant):
    return signed_in(tenant, "admin")


@pytest.fixture
def operator_client(tenant):
    return signed_in(tenant, "operator")


def _form(llm, **overrides):
    data = {
        "name": "Kobold", "provider": "text_completion", "model": "any",
        "base_url": llm.root_url, "api_key_env": "", "context_limit": "8192",
        "max_output_tokens": "512", "temperature": "0.7", "top_p": "0.9",
        "timeout_ms": "30000", "extra": "{}", "wire": "koboldcpp",
        "instruct_template": "mistral_v7", "top_k": "40", "min_p": "0.05",
        "dry_multiplier": "0.8", "xtc_threshold": "0.1",
    }  # fmt: skip
    data.update(overrides)
    return data


def test_a_text_completion_config_is_made_in_the_console(admin_client, tenant, llm):
    page = admin_client.get("/console/models/new/").content.decode()
    assert 'name="wire"' in page and 'name="mirostat_tau"' in page
    response = admin_client.post("/console/models/new/", _form(llm))
    assert response.status_code == 302, response.content.decode()[:2000]
    config = ModelConfig.objects.get(tenant=tenant)
    assert (config.wire, config.instruct_template, config.top_k) == ("koboldcpp", "mistral_v7", 40)
    assert config.min_p == 0.05 and config.typical_p is None


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"min_p": "2"}, "min_p"),
        ({"mirostat_mode": "7"}, "mirostat_mode"),
        ({"top_k": "lots"}, "top_k"),
        ({"wire": ""}, "wire"),
        ({"instruct_template": "nope"}, "instruct_template"),
    ],
)
def test_a_bad_sampler_or_template_is_refused_on_its_field(admin_client, tenant, llm, overrides,
                                                           field):  # fmt: skip
    response = admin_client.post("/console/models/new/", _form(llm, **overrides))
    assert response.status_code == 400
    assert f'id="id_{field}_errors"' in response.content.decode()
    assert not ModelConfig.objects.filter(tenant=tenant).exists()


def test_a_file_is_imported_listed_and_deleted(admin_client, tenant):
    upload = SimpleUploadedFile("Vicuna.json", json.dumps(ST_FILE).encode(), "application/json")
    response = admin_client.post(PAGE, {"file": upload, "name": ""})
    assert response.status_code == 302
    template = InstructTemplate.objects.get(tenant=tenant)
    assert template.name == "Vicuna" and template.instruct["input_sequence"] == "USER:"
    page = admin_client.get(PAGE).content.decode()
    assert "Vicuna" in page and "chatml" in page
    assert admin_client.post(f"{PAGE}{template.pk}/delete/").status_code == 302
    assert not InstructTemplate.objects.exists()


def test_pasted_json_imports_too(admin_client, tenant):
    response = admin_client.post(PAGE, {"text": json.dumps(ST_FILE), "name": "Pasted"})
    assert response.status_code == 302
    assert InstructTemplate.objects.get(tenant=tenant).name == "Pasted"


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ({"text": json.dumps({**ST_FILE, "wrap": "sometimes"})}, "instruct_template_invalid"),
        ({"text": json.dumps({"output_sequence": "x"})}, "input_sequence"),
        ({"text": "{not json"}, "Not JSON"),
        ({"text": ""}, "Choose a file"),
    ],
)
def test_a_bad_file_is_a_422_with_its_code_and_nothing_saved(admin_client, body, shown):
    response = admin_client.post(PAGE, body)
    assert response.status_code == 422
    assert shown in response.content.decode()
    assert not InstructTemplate.objects.exists()


def test_an_operator_reads_but_cannot_import(operator_client):
    assert operator_client.get(PAGE).status_code == 200
    assert operator_client.post(PAGE, {"text": json.dumps(ST_FILE)}).status_code == 403
