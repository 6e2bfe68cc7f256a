"""A scenario's ``workflow`` on save, against the real database: parsed and planned with the
scenario's id as the profile and the capabilities registered now; each refusal is the
house's scenario error (422 ``validation_error``) naming the field and the node, and nothing
is written. The console's editor draws the graph and shows each problem beside its node."""

from __future__ import annotations

import json

import pytest

from roleplay.models import ModelConfig, Scenario
from roleplay.scenarios.services import ScenarioConfigInvalid, create_scenario, update_scenario
from roleplay.workflows import registry
from tests.api.helpers import assert_error
from tests.matrix.conftest import console_client  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

URL = "/api/v1/scenarios/"


def node(node_id, capability="worldbook_search", **fields):
    return {"id": node_id, "capability": capability, **fields}


def workflow(*nodes, visible=("worldbook_search", "model_call", "memory_recall", "state_read")):
    return {"visibleCapabilities": list(visible), "executionGraph": {"nodes": list(nodes)}}


GATE = workflow(
    node("rules", input={"limit": 3}, projectTo="none"),
    node(
        "scene",
        "model_call",
        dependsOn=["rules"],
        input={"modelConfigId": "actor", "rolePrompt": "director"},
    ),
)


@pytest.fixture
def actor(tenant):
    return ModelConfig.objects.create(tenant=tenant, name="actor", provider="llama_cpp", model="m")


def _post(api, actor, wf):
    return api.post(
        URL, {"name": "Gate", "model_config": str(actor.pk), "workflow": wf}, format="json"
    )


def test_a_valid_workflow_is_stored_and_read_back(api, actor):
    response = _post(api, actor, GATE)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["workflow"] == GATE
    assert Scenario.objects.get(pk=body["id"]).workflow == GATE
    assert api.get(f"{URL}{body['id']}/").json()["workflow"] == GATE


@pytest.mark.parametrize(
    ("wf", "reason", "node_id"),
    [
        (workflow(node("a", dependsOn=["b"]), node("b", dependsOn=["a"])), "dependency_cycle", "a"),
        (workflow(node("a"), node("a")), "duplicate_node", "a"),
        (workflow(node("a", dependsOn=["ghost"])), "missing_dependency", "a"),
        (workflow(node("a"), visible=("model_call",)), "invisible_capability", "a"),
        (workflow(node("a", "teleport"), visible=("teleport",)), "unregistered_capability", "a"),
    ],
)
def test_a_graph_the_planner_refuses_is_a_422_naming_the_node(api, actor, wf, reason, node_id):
    error = assert_error(_post(api, actor, wf), 422, "validation_error")
    assert error["details"]["reason"] == reason
    assert error["details"]["node"] == node_id
    assert error["details"]["field"] == f"workflow.executionGraph.nodes.{node_id}"
    assert node_id in error["message"]
    assert not Scenario.objects.exists()


def test_a_bad_field_is_a_422_naming_its_path_and_node(api, actor):
    wf = workflow(node("a", required="yes"))
    error = assert_error(_post(api, actor, wf), 422, "validation_error")
    assert error["details"]["field"] == "workflow.executionGraph.nodes.0.required"
    assert error["details"]["node"] == "a"
    assert error["details"]["errors"][0]["code"] == "wrong_type"
    not_object = assert_error(_post(api, actor, ["a"]), 422, "validation_error")
    assert not_object["details"]["field"].startswith("workflow")
    assert not Scenario.objects.exists()


@pytest.mark.parametrize(
    ("ref", "role", "expected"),
    [("ghost", "director", "no model config 'ghost'"), ("actor", "no_such_role", "no_such_role")],
)
def test_a_model_call_names_a_config_of_the_tenant_holding_the_role(
    api, actor, ref, role, expected
):
    scene = node("scene", "model_call", input={"modelConfigId": ref, "rolePrompt": role})
    error = assert_error(_post(api, actor, workflow(node("rules"), scene)), 422, "validation_error")
    assert error["details"]["field"] == "workflow.executionGraph.nodes.1.input.modelConfigId"
    assert error["details"]["node"] == "scene" and expected in error["message"]
    assert not Scenario.objects.exists()


def test_an_update_is_checked_too_and_a_refusal_writes_nothing(tenant, actor):
    scenario = create_scenario(tenant, name="Gate", model_config=actor, workflow=GATE)
    cycle = workflow(node("a", dependsOn=["a"]))
    with pytest.raises(ScenarioConfigInvalid) as caught:
        update_scenario(scenario, version=scenario.version, workflow=cycle)
    assert caught.value.details["node"] == "a"
    scenario.refresh_from_db()
    assert scenario.workflow == GATE and scenario.version == 1
    update_scenario(scenario, version=1, workflow=None)
    scenario.refresh_from_db()
    assert scenario.workflow is None


def test_capabilities_are_listed_with_their_input_schemas(api):
    response = api.get("/api/v1/workflow-capabilities/")
    assert response.status_code == 200, response.content
    rows = {row["name"]: row for row in response.json()["results"]}
    assert {"worldbook_search", "memory_recall", "state_read", "model_call"} <= set(rows)
    assert rows["model_call"]["input_schema"]["required"] == ["modelConfigId", "rolePrompt"]
    assert rows == {e.name: {**rows[e.name]} for e in registry.entries()}


def _form(actor, wf: str):
    data = {"name": "Gate", "description": "", "model_config": str(actor.pk), "preset": ""}
    for box in ("agenticV2", "storyV1", "compact", "preActorDirector", "externalMemory"):
        data[box] = ""
    data["worldbook"] = ""
    data["workflow"] = wf
    return data


def test_the_console_editor_draws_the_graph(console_client, tenant, actor):  # noqa: F811
    client = console_client(tenant, "operator")
    scenario = create_scenario(tenant, name="Gate", model_config=actor, workflow=GATE)
    page = client.get(f"/console/scenarios/{scenario.pk}/").content.decode()
    assert 'id="workflow-graph"' in page
    assert 'data-node="rules"' in page and 'data-node="scene"' in page
    assert 'data-from="rules" data-to="scene"' in page  # the arrow
    assert "worldbook_search" in page and "workflow-problem" not in page


def test_the_console_editor_shows_the_problem_beside_the_node(console_client, tenant, actor):  # noqa: F811
    client = console_client(tenant, "operator")
    scenario = create_scenario(tenant, name="Gate", model_config=actor, workflow=GATE)
    looped = workflow(
        node("rules"), node("scene", dependsOn=["scene2"]), node("scene2", dependsOn=["scene"])
    )
    data = _form(actor, json.dumps(looped)) | {"version": "1"}
    response = client.post(f"/console/scenarios/{scenario.pk}/", data)
    assert response.status_code == 422
    page = response.content.decode()
    assert 'class="wf-node wf-error" data-node="scene"' in page
    assert 'id="workflow-node-scene" class="has-error"' in page
    assert "dependency_cycle" in page
    assert 'id="workflow-node-rules">' in page  # the valid node is not marked
    scenario.refresh_from_db()
    assert scenario.workflow == GATE
