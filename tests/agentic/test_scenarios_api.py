"""Scenarios over REST against the real database: the config objects with the seed's names,
their defaults filled on save, every model config they name checked against the tenant and
its preset's role prompts on save (a 422 naming the field, nothing written), updates by
compare-and-set, and which scenario a conversation runs."""

from __future__ import annotations

import pytest

from roleplay.models import Character, Conversation, ModelConfig, Scenario
from roleplay.presets.services import create_preset
from roleplay.prompting.default_preset import default_prompt_data
from roleplay.scenarios.config import SPECIALISTS
from roleplay.scenarios.selectors import scenario_for
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db

URL = "/api/v1/scenarios/"


def _config(tenant, name, preset=None):
    return ModelConfig.objects.create(
        tenant=tenant, name=name, provider="llama_cpp", model="m", preset=preset
    )


@pytest.fixture
def configs(tenant):
    return {name: _config(tenant, name) for name in ("actor", "orchestrator", "worker", "director")}


def _v2(configs, **fields):
    return {
        "modelConfigs": {
            "actor": str(configs["actor"].pk),
            "orchestrator": "orchestrator",  # by name: the seed's scenarios name their configs
            "specialists": {name: str(configs["worker"].pk) for name in SPECIALISTS},
            "director": "director",
        },
        **fields,
    }


def _create(api, configs, **fields):
    body = {"name": "Lighthouse", "model_config": str(configs["actor"].pk), **fields}
    return api.post(URL, body, format="json")


def test_create_fills_the_defaults_and_reads_back(api, configs):
    response = _create(api, configs, agenticV2=_v2(configs, maxToolCalls=5))
    assert response.status_code == 201, response.content
    body = response.json()
    v2 = body["agenticV2"]
    assert v2["maxToolCalls"] == 5 and v2["maxParallelTools"] == 6 and v2["enabled"] is True
    assert v2["enabledTools"][-1] == "update_director_state" and len(v2["enabledTools"]) == 7
    assert body["storyV1"] is None and body["compact"] is None and body["version"] == 1
    assert api.get(f"{URL}{body['id']}/").json()["agenticV2"] == v2


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"maxToolCalls": 21}, "agenticV2.maxToolCalls"),
        ({"enabledTools": ["generate_image"]}, "agenticV2.enabledTools.0"),
        ({"imageTool": True}, "agenticV2.imageTool"),
        ({"routingMode": "auto"}, "agenticV2.escalationModelConfigId"),
        ({"escalationModelConfigId": "nobody", "routingMode": "auto"},
         "agenticV2.escalationModelConfigId"),
    ],
)  # fmt: skip
def test_bad_config_is_422_naming_the_field_and_writes_nothing(api, configs, change, field):
    response = _create(api, configs, agenticV2=_v2(configs, **change))
    assert assert_error(response, 422, "validation_error")["details"]["field"] == field
    assert not Scenario.objects.exists()


def test_references_must_be_the_tenants_and_the_actor_the_scenarios(
    api, configs, tenant, other_tenant
):
    foreign = _config(other_tenant, "orchestrator-elsewhere")
    body = _v2(configs)
    body["modelConfigs"]["orchestrator"] = str(foreign.pk)
    response = _create(api, configs, agenticV2=body)
    error = assert_error(response, 422, "validation_error")
    assert error["details"]["field"] == "agenticV2.modelConfigs.orchestrator"
    other_actor = _v2(configs)
    other_actor["modelConfigs"]["actor"] = "worker"
    response = _create(api, configs, agenticV2=other_actor)
    error = assert_error(response, 422, "validation_error")
    assert error["details"]["field"] == "agenticV2.modelConfigs.actor"
    by_name = _v2(configs)
    by_name["modelConfigs"]["actor"] = "actor"  # the Actor's name names it too
    assert _create(api, configs, agenticV2=by_name).status_code == 201


def test_a_preset_without_the_role_prompt_is_refused_on_save(api, configs, tenant):
    prompts = [p for p in default_prompt_data() if p.get("name") != "orchestrator"]
    bare = create_preset(tenant, name="bare", prompts=prompts)
    configs["orchestrator"].preset = bare
    configs["orchestrator"].save()
    response = _create(api, configs, agenticV2=_v2(configs))
    error = assert_error(response, 422, "validation_error")
    assert error["details"]["field"] == "agenticV2.modelConfigs.orchestrator"
    assert error["details"]["role"] == "orchestrator" and error["details"]["preset"] == "bare"
    off = _v2(configs, enabled=False)  # a part that is off names configs unchecked
    assert _create(api, configs, agenticV2=off).status_code == 201


def test_story_compact_and_the_rules_between_them(api, configs):
    story = {"modelConfigId": "worker"}
    both = _create(api, configs, agenticV2=_v2(configs), storyV1=story)
    assert both.status_code == 201, both.content
    assert both.json()["storyV1"]["seed"] == 731
    director = {"modelConfigId": "worker"}
    refused = _create(api, configs, name="Two", storyV1=story, preActorDirector=director)
    assert assert_error(refused, 422, "validation_error")["details"]["field"] == "preActorDirector"
    compact = {"compactorModelConfigId": "worker"}
    refused = _create(api, configs, name="Three", agenticV2=_v2(configs), compact=compact)
    error = assert_error(refused, 422, "validation_error")
    assert error["details"]["field"] == "agenticV2.contextGovernance"


def test_updates_are_compare_and_set(api, configs):
    created = _create(api, configs, agenticV2=_v2(configs)).json()
    url = f"{URL}{created['id']}/"
    body = {"version": 1, "agenticV2": _v2(configs, maxStateChars=4000)}
    changed = api.patch(url, body, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["version"] == 2 and changed.json()["agenticV2"]["maxStateChars"] == 4000
    stale = api.patch(url, {"version": 1, "name": "Other"}, format="json")
    assert assert_error(stale, 409, "revision_conflict")["details"]["current_version"] == 2
    assert_error(api.patch(url, {"name": "No version"}, format="json"), 400, "validation_error")
    bad = api.patch(
        url, {"version": 2, "agenticV2": _v2(configs, maxStateChars=799)}, format="json"
    )
    assert assert_error(bad, 422, "validation_error")["details"]["field"] == (
        "agenticV2.maxStateChars"
    )
    assert Scenario.objects.get(pk=created["id"]).agentic_v2["maxStateChars"] == 4000


def test_which_scenario_a_conversation_runs(api, configs, tenant, player, character):
    first = Scenario.objects.get(pk=_create(api, configs).json()["id"])
    second = Scenario.objects.get(pk=_create(api, configs, name="Other").json()["id"])
    conversation = Conversation.objects.create(tenant=tenant, player=player, character=character)
    assert scenario_for(conversation) is None
    response = api.patch(
        f"/api/v1/characters/{character.pk}/", {"default_scenario": str(first.pk)}, format="json"
    )
    assert response.status_code == 200, response.content
    conversation = Conversation.objects.get(pk=conversation.pk)
    assert scenario_for(conversation) == first
    response = api.patch(
        f"/api/v1/conversations/{conversation.pk}/", {"scenario": str(second.pk)}, format="json"
    )
    assert response.status_code == 200, response.content
    assert scenario_for(Conversation.objects.get(pk=conversation.pk)) == second
    assert api.delete(f"{URL}{second.pk}/").status_code == 204
    assert scenario_for(Conversation.objects.get(pk=conversation.pk)) == first
    assert Character.objects.get(pk=character.pk).default_scenario_id == first.pk
