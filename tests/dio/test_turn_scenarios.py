"""A scenario's ``dio`` through its doors (REST and the console form, both through
``roleplay.scenarios.services``): stored with its defaults, refused with the field's dotted
path when a rule fails, and refused with the slot rule's code when the Actor preset cannot
take DIO's prompt."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from roleplay.models import ModelConfig, Scenario
from roleplay.presets.services import create_preset
from roleplay.prompting.default_preset import default_prompt_data
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db

DIRECTOR = {"modelConfigId": "scripted", "skills": []}
INTERNAL = {"mode": "internal", "modelConfigId": "scripted"}


def body(model_config, **fields):
    return {
        "name": "With DIO",
        "model_config": str(model_config.pk),
        "preActorDirector": DIRECTOR,
        **fields,
    }


def test_dio_is_stored_with_its_defaults_and_answered(api, model_config):
    response = api.post("/api/v1/scenarios/", body(model_config, dio=INTERNAL), format="json")
    assert response.status_code == 201, response.content
    assert response.json()["dio"] == {
        "mode": "internal",
        "modelConfigId": "scripted",
        "serviceUrl": None,
        "apiKeyEnv": None,
        "timeoutMs": 3000,
    }
    scenario = Scenario.objects.get()
    assert scenario.dio["timeoutMs"] == 3000
    got = api.get(f"/api/v1/scenarios/{scenario.pk}/").json()
    assert got["dio"]["mode"] == "internal"
    off = api.patch(f"/api/v1/scenarios/{scenario.pk}/", {"dio": None, "version": 1}, format="json")
    assert off.status_code == 200, off.content
    assert off.json()["dio"] is None


@pytest.mark.parametrize(
    ("dio", "director", "field"),
    [
        ({"mode": "internal"}, True, "dio.modelConfigId"),
        ({"mode": "internal", "modelConfigId": "nobody"}, True, "dio.modelConfigId"),
        ({"mode": "external"}, True, "dio.serviceUrl"),
        ({"mode": "external", "serviceUrl": "https://d.test", "apiKeyEnv": "sk-x1"}, True,
         "dio.apiKeyEnv"),
        ({**INTERNAL, "timeoutMs": 30_001}, True, "dio.timeoutMs"),
        (INTERNAL, False, "dio.mode"),
        ({"mode": "on"}, True, "dio.mode"),
    ],
)  # fmt: skip
def test_a_refused_dio_names_its_field_and_writes_nothing(api, model_config, dio, director, field):
    data = body(model_config, dio=dio)
    if not director:
        data.pop("preActorDirector")
    response = api.post("/api/v1/scenarios/", data, format="json")
    error = assert_error(response, 422, "validation_error")
    assert error["details"]["field"] == field
    assert not Scenario.objects.exists()


def no_slot_preset(tenant):
    prompts = [
        {**p, "name": "Character"} if p.get("name") == "roleplay" else p
        for p in default_prompt_data()
    ]
    return create_preset(tenant, name="no slot", prompts=prompts)


def test_an_actor_preset_without_a_character_slot_is_refused(api, tenant, model_config):
    preset = no_slot_preset(tenant)
    data = body(model_config, dio=INTERNAL, preset=str(preset.pk))
    error = assert_error(
        api.post("/api/v1/scenarios/", data, format="json"), 422, "dio_slot_missing"
    )
    assert error["details"]["field"] == "dio.mode" and error["details"]["preset"] == "no slot"
    # The model config's own preset counts when the scenario names none.
    model_config.preset = preset
    model_config.save()
    data = body(model_config, dio=INTERNAL)
    assert_error(api.post("/api/v1/scenarios/", data, format="json"), 422, "dio_slot_missing")
    # DIO off: that preset is fine.
    data = body(model_config, dio={"mode": "off"})
    assert api.post("/api/v1/scenarios/", data, format="json").status_code == 201


def test_a_placeholder_preset_can_take_dio(api, tenant, model_config):
    prompts = [
        {**p, "name": "Character", "content": "{{getvar::systemPrompt}}"}
        if p.get("name") == "roleplay"
        else p
        for p in default_prompt_data()
    ]
    preset = create_preset(tenant, name="placeholder", prompts=prompts)
    data = body(model_config, dio=INTERNAL, preset=str(preset.pk))
    assert api.post("/api/v1/scenarios/", data, format="json").status_code == 201


def test_the_console_form_saves_dio_and_shows_a_refusal_by_its_box(
    operator_user, tenant, model_config
):
    client = Client()
    client.force_login(operator_user)
    form = {
        "name": "Console DIO",
        "description": "",
        "model_config": str(model_config.pk),
        "preset": "",
        "preActorDirector": json.dumps(DIRECTOR),
        "dio": json.dumps(INTERNAL),
    }
    response = client.post("/console/scenarios/new/", form)
    assert response.status_code == 302, response.content[:800]
    scenario = Scenario.objects.get()
    assert scenario.dio["mode"] == "internal"
    page = client.get(f"/console/scenarios/{scenario.pk}/").content.decode()
    assert "dio as JSON" in page and "&quot;modelConfigId&quot;: &quot;scripted&quot;" in page
    assert "DIO" in client.get("/console/scenarios/").content.decode()
    refused = client.post("/console/scenarios/new/", {**form, "name": "Bad", "dio": "{}"})
    assert refused.status_code == 422
    assert "dio.mode" in refused.content.decode()
    assert ModelConfig.objects.filter(tenant=tenant).count() == 1
