"""Console pages of scenarios: operators create and edit one with its config objects as
JSON, through ``roleplay.scenarios.services``; a refused object is shown by its box with the
field's dotted path, a stale version keeps what was typed, and nothing is written. Viewers
read and every write they send is refused; another tenant's scenario is a 404."""

from __future__ import annotations

import json

import pytest

from roleplay.models import ModelConfig, Scenario
from roleplay.scenarios.config import SPECIALISTS
from roleplay.scenarios.services import create_scenario

pytestmark = pytest.mark.django_db

LIST = "/console/scenarios/"


@pytest.fixture
def actor(tenant):
    return ModelConfig.objects.create(tenant=tenant, name="actor", provider="llama_cpp", model="m")


def _v2(**fields):
    return {
        "modelConfigs": {
            "actor": "actor",
            "orchestrator": "actor",
            "specialists": {name: "actor" for name in SPECIALISTS},
            "director": "actor",
        },
        **fields,
    }


def _form(actor, **fields):
    data = {"name": "Harbor", "description": "", "model_config": str(actor.pk), "preset": ""}
    for box in ("agenticV2", "storyV1", "compact", "preActorDirector"):
        data[box] = ""
    data.update(fields)
    return data


def test_create_and_edit_with_the_config_as_json(operator_client, actor):
    response = operator_client.post(
        f"{LIST}new/", _form(actor, agenticV2=json.dumps(_v2(maxToolCalls=4)))
    )
    assert response.status_code == 302, response.content[:800]
    scenario = Scenario.objects.get()
    assert scenario.agentic_v2["maxToolCalls"] == 4 and scenario.version == 1
    page = operator_client.get(f"{LIST}{scenario.pk}/")
    assert page.status_code == 200
    assert "maxParallelTools" in page.content.decode()  # the defaults, filled in
    listed = operator_client.get(LIST).content.decode()
    assert "Harbor" in listed and "Agent V2" in listed
    edit = _form(actor, agenticV2=json.dumps(_v2(maxToolCalls=9)), version="1")
    assert operator_client.post(f"{LIST}{scenario.pk}/", edit).status_code == 302
    scenario.refresh_from_db()
    assert scenario.agentic_v2["maxToolCalls"] == 9 and scenario.version == 2


@pytest.mark.parametrize(
    ("box", "text", "shown"),
    [
        ("agenticV2", json.dumps(_v2(maxToolCalls=21)), "agenticV2.maxToolCalls"),
        ("agenticV2", "{not json", "not valid JSON"),
        ("storyV1", "[1, 2]", "must be a JSON object"),
        ("compact", json.dumps({"compactorModelConfigId": "actor", "triggerRatio": 1}),
         "compact.triggerRatio"),
        ("agenticV2", json.dumps(_v2(note="\u0000")), "NUL"),
    ],
)  # fmt: skip
def test_a_refused_config_is_shown_and_writes_nothing(operator_client, actor, box, text, shown):
    response = operator_client.post(f"{LIST}new/", _form(actor, **{box: text}))
    assert response.status_code == 422
    assert shown in response.content.decode()
    assert not Scenario.objects.exists()


def test_a_stale_version_keeps_what_was_typed(operator_client, tenant, actor):
    scenario = create_scenario(tenant, name="Harbor", model_config=actor)
    edit = _form(actor, description="typed by me", version="1")
    assert operator_client.post(f"{LIST}{scenario.pk}/", edit).status_code == 302
    stale = operator_client.post(f"{LIST}{scenario.pk}/", _form(actor, name="Lost", version="1"))
    assert stale.status_code == 422
    assert "version 2" in stale.content.decode() and 'value="Lost"' in stale.content.decode()
    assert Scenario.objects.get().name == "Harbor"


def test_viewers_read_and_cannot_write(viewer_client, tenant, actor):
    scenario = create_scenario(tenant, name="Harbor", model_config=actor)
    assert viewer_client.get(LIST).status_code == 200
    assert viewer_client.get(f"{LIST}{scenario.pk}/").status_code == 200
    for url in (f"{LIST}new/", f"{LIST}{scenario.pk}/", f"{LIST}{scenario.pk}/delete/"):
        assert viewer_client.post(url, _form(actor, version="1")).status_code == 403
    assert Scenario.objects.get().version == 1


def test_delete_and_another_tenants_scenario(operator_client, tenant, other_tenant, actor):
    theirs = create_scenario(other_tenant, name="Theirs")
    assert operator_client.get(f"{LIST}{theirs.pk}/").status_code == 404
    assert operator_client.post(f"{LIST}{theirs.pk}/delete/").status_code == 404
    mine = create_scenario(tenant, name="Mine", model_config=actor)
    assert operator_client.get(f"{LIST}{mine.pk}/delete/").status_code == 200
    assert operator_client.post(f"{LIST}{mine.pk}/delete/").status_code == 302
    assert list(Scenario.objects.values_list("name", flat=True)) == ["Theirs"]


def test_a_characters_default_scenario_is_chosen_among_the_tenants(
    operator_client, tenant, other_tenant, actor, character
):
    mine = create_scenario(tenant, name="Mine", model_config=actor)
    theirs = create_scenario(other_tenant, name="Theirs")
    page = operator_client.get(f"/console/characters/{character.pk}/").content.decode()
    assert str(mine.pk) in page and str(theirs.pk) not in page
