"""Declared workflows in real turns, against the scripted OpenAI-compatible server and the
real database: "look up the gate rules (worldbook_search) → write the scene requirement
(model_call) → Actor", whose text reaches the Actor's request; an optional node that fails
(its dependent still runs, the trace shows the failure); a required one that fails the turn
with ``workflow_failed`` naming the node; a capability unregistered after the save refused
before the run; each run kept and listed over REST (tenant-scoped) and in the console."""

from __future__ import annotations

import pytest

from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelConfig, Turn
from roleplay.presets.services import create_preset
from roleplay.prompting.default_preset import default_prompt_data
from roleplay.scenarios.services import create_scenario
from roleplay.workflows import registry
from roleplay.workflows.models import WorkflowRun
from tests.matrix.conftest import console_client  # noqa: F401 (fixture)
from worldbook import services as books
from worldbook.engine.schema import BookIn

pytestmark = pytest.mark.django_db(transaction=True)

RULE = "Entering the inner ward needs a signed warrant; a copper key never replaces it."
SCENE = "The guard asks for the warrant and does not let the key count as permission."
WRITER_PROMPT = "You write what the next scene must respect. The player said: {{getvar::query}}"
INPUT = "Rules found:\n{{getvar::rules}}\n\nPlayer: {{getvar::query}}"
PLAYER = "I hand the guard my copper key."


def player_at(messages: list[dict]) -> int:
    """The index of the player's message (the last user message) in an Actor request."""
    return max(i for i, m in enumerate(messages) if m["role"] == "user" and m["content"] == PLAYER)


@pytest.fixture
def writer(tenant, llm):
    """A model config whose preset holds the ``scene_writer`` role prompt."""
    prompts = [
        *default_prompt_data(),
        {
            "identifier": "scene_writer",
            "name": "scene_writer",
            "content": WRITER_PROMPT,
            "injection": {"position": "none"},
        },
    ]
    preset = create_preset(tenant, name="writers", prompts=prompts)
    return ModelConfig.objects.create(
        tenant=tenant,
        name="writer",
        provider="openai_compatible",
        model="writer-model",
        base_url=llm.base_url,
        context_limit=4096,
        max_output_tokens=128,
        timeout_ms=5000,
        preset=preset,
    )


@pytest.fixture
def gate_book(tenant, character):
    book, _ = books.create_book(
        tenant,
        BookIn.model_validate(
            {
                "name": "City",
                "entries": [
                    {"id": "gate", "title": "Gate rules", "content": RULE, "keys": ["zzzq"]},
                    {
                        "id": "food",
                        "title": "Market",
                        "content": "Bread costs two coins.",
                        "keys": ["zzzq"],
                    },
                ],
            }
        ),
    )
    books.put_bindings(tenant, str(character.id), [{"book_id": str(book.id)}])
    return book


def scene_node(**fields):
    return {
        "id": "scene",
        "capability": "model_call",
        "dependsOn": ["rules"],
        "input": {"modelConfigId": "writer", "rolePrompt": "scene_writer", "input": INPUT},
        **fields,
    }


def rules_node(**fields):
    return {
        "id": "rules",
        "capability": "worldbook_search",
        "input": {"query": "copper key warrant inner ward", "limit": 1, "mode": "lexical"},
        "projectTo": "none",
        **fields,
    }


def run_with(tenant, conversation, model_config, nodes, visible=None):
    workflow = {
        "visibleCapabilities": visible or sorted({n["capability"] for n in nodes}),
        "executionGraph": {"nodes": nodes},
    }
    scenario = create_scenario(tenant, name="Gate", model_config=model_config, workflow=workflow)
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    return scenario


def play(api, conversation, key="k-1"):
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": key, "content": PLAYER},
        format="json",
    )
    assert response.status_code == 201, response.content
    return Turn.objects.filter(conversation=conversation).order_by("-started_at").first()


def by_model(llm, model):
    return [r for r in llm.requests if r.get("model") == model]


def test_gate_rules_then_scene_requirement_reach_the_actor(
    api, tenant, conversation, model_config, writer, gate_book, llm
):
    run_with(tenant, conversation, model_config, [rules_node(), scene_node()])
    llm.enqueue(Reply(content=SCENE), Reply(content="Show me your warrant, stranger."))
    turn = play(api, conversation)
    assert turn.status == "complete", turn.trace.get("error")
    [scene_call] = by_model(llm, "writer-model")
    system, user = scene_call["messages"]
    assert system["content"] == WRITER_PROMPT.replace("{{getvar::query}}", PLAYER)
    assert RULE in user["content"] and "Bread" not in user["content"]  # limit 1: the rule
    assert user["content"].endswith(f"Player: {PLAYER}")
    [actor] = by_model(llm, "scripted-model")
    messages = actor["messages"]
    player = player_at(messages)  # the per-turn context (the selected rule) follows it
    assert messages[player - 1]["role"] == "system" and messages[player - 1]["content"] == SCENE
    assert turn.trace["workflow"]["placed"] == {
        "foundation_context": None,
        "turn_context": "at_depth",
    }
    run = WorkflowRun.objects.get(conversation=conversation)
    assert run.status == "succeeded" and run.turn_id == turn.pk and run.error is None
    assert [(n["node_id"], n["status"]) for n in run.nodes] == [
        ("rules", "succeeded"),
        ("scene", "succeeded"),
    ]
    assert all(n["output_bytes"] > 0 for n in run.nodes)


def test_a_preset_outlet_takes_the_turn_context_where_the_operator_put_it(
    api, tenant, conversation, model_config, writer, gate_book, llm
):
    prompts = default_prompt_data()
    main = next(p for p in prompts if p["identifier"] == "main")
    main["content"] = "Stay in the scene.\n{{outlet::turn_context}}\nNever break character."
    model_config.preset = create_preset(tenant, name="with outlet", prompts=prompts)
    model_config.save(update_fields=["preset"])
    run_with(tenant, conversation, model_config, [rules_node(), scene_node()])
    llm.enqueue(Reply(content=SCENE), Reply(content="Show me your warrant, stranger."))
    turn = play(api, conversation)
    assert turn.status == "complete", turn.trace.get("error")
    assert turn.trace["workflow"]["placed"]["turn_context"] == "outlet:turn_context"
    [actor] = by_model(llm, "scripted-model")
    head = actor["messages"][0]
    assert head["role"] == "system" and "{{outlet::" not in head["content"]
    assert head["content"].index("Stay in the scene.") < head["content"].index(SCENE)
    assert head["content"].index(SCENE) < head["content"].index("Never break character.")
    assert all(SCENE not in m["content"] for m in actor["messages"][1:])  # placed once


def gone_later(tenant, writer):
    """A model config named when the workflow is saved, deleted before the turn runs."""
    return ModelConfig.objects.create(
        tenant=tenant, name="gone", provider="llama_cpp", model="m", preset=writer.preset
    )


def test_a_failing_optional_node_leaves_its_dependent_running(
    api, tenant, conversation, model_config, writer, gate_book, llm
):
    gone = gone_later(tenant, writer)
    broken = rules_node(capability="model_call", required=False, projectTo="turn_context")
    broken["input"] = {"modelConfigId": "gone", "rolePrompt": "scene_writer"}
    run_with(tenant, conversation, model_config, [broken, scene_node()])
    gone.delete()
    llm.enqueue(Reply(content=SCENE), Reply(content="Show me your warrant."))
    turn = play(api, conversation)
    assert turn.status == "complete", turn.trace.get("error")
    [scene_call] = by_model(llm, "writer-model")  # it ran, without the rules
    assert "Rules found:\n\n" in scene_call["messages"][1]["content"]
    messages = by_model(llm, "scripted-model")[0]["messages"]
    assert messages[player_at(messages) - 1]["content"] == SCENE
    run = WorkflowRun.objects.get(conversation=conversation)
    assert run.status == "succeeded"
    rules, scene = run.nodes
    assert rules["status"] == "failed" and rules["error"]["code"] == "model_config_missing"
    assert scene["status"] == "succeeded"
    assert turn.trace["workflow"]["nodes"][0]["error"]["code"] == "model_config_missing"


def test_a_failing_required_node_fails_the_turn_naming_it(
    api, tenant, conversation, model_config, writer, gate_book, llm
):
    gone = gone_later(tenant, writer)
    broken = scene_node()
    broken["input"] = {**broken["input"], "modelConfigId": "gone"}
    run_with(tenant, conversation, model_config, [rules_node(), broken])
    gone.delete()
    turn = play(api, conversation)
    assert turn.status == "failed" and turn.error_code == "workflow_failed"
    assert by_model(llm, "scripted-model") == []  # the Actor was never asked
    run = WorkflowRun.objects.get(conversation=conversation)
    assert run.status == "failed" and run.error["node"] == "scene"
    assert run.error["cause"] == "model_config_missing"
    assert [n["status"] for n in run.nodes] == ["succeeded", "failed"]


def test_a_capability_unregistered_after_the_save_is_refused_before_the_run(
    api, tenant, conversation, model_config, gate_book, llm, monkeypatch
):
    run_with(tenant, conversation, model_config, [rules_node()])
    monkeypatch.delitem(registry._REGISTRY, "worldbook_search")
    turn = play(api, conversation)
    assert turn.status == "failed" and turn.error_code == "workflow_failed"
    run = WorkflowRun.objects.get(conversation=conversation)
    assert run.error["code"] == "unregistered_capability" and run.error["node"] == "rules"
    assert run.nodes == []


def test_runs_are_listed_over_rest_scoped_to_the_tenant(
    api, api_client_for, other_tenant, tenant, conversation, model_config, gate_book, llm
):
    run_with(tenant, conversation, model_config, [rules_node(projectTo="foundation_context")])
    play(api, conversation, "k-1")
    play(api, conversation, "k-2")
    url = f"/api/v1/conversations/{conversation.pk}/workflow-runs/"
    body = api.get(url).json()
    assert body["count"] == 2 and len(body["results"]) == 2
    first = body["results"][0]
    assert first["status"] == "succeeded" and first["nodes"][0]["node_id"] == "rules"
    assert first["placed"]["foundation_context"] == "after_character"
    assert [r["id"] for r in api.get(url, {"limit": 1}).json()["results"]] == [first["id"]]
    foreign = api_client_for(other_tenant).get(url)
    assert foreign.status_code == 404


def test_the_console_lists_a_conversations_runs_with_node_traces(
    console_client,  # noqa: F811
    api,
    tenant,
    conversation,
    model_config,
    writer,
    gate_book,
    llm,
):
    gone = gone_later(tenant, writer)
    broken = rules_node(capability="model_call", required=False)
    broken["input"] = {"modelConfigId": "gone", "rolePrompt": "scene_writer"}
    run_with(tenant, conversation, model_config, [broken, scene_node()])
    gone.delete()
    llm.enqueue(Reply(content=SCENE), Reply(content="Warrant?"))
    play(api, conversation)
    page = console_client(tenant, "viewer").get(
        f"/console/conversations/{conversation.pk}/workflow-runs/"
    )
    assert page.status_code == 200
    text = page.content.decode()
    assert 'class="node-failed"><td>rules</td>' in text
    assert "model_config_missing" in text and 'class="node-succeeded"><td>scene</td>' in text


def recall_node():
    # limit 0 is outside memory_recall's schema: the node fails with bad_input
    return {"id": "memories", "capability": "memory_recall", "input": {"limit": 0}}


@pytest.mark.parametrize("policy", ["fail_turn", None])
def test_a_failing_memory_recall_fails_the_turn_by_default(
    api, tenant, conversation, model_config, llm, policy
):
    scenario = run_with(tenant, conversation, model_config, [recall_node()])
    if policy:
        scenario.workflow = {**scenario.workflow, "failurePolicy": {"memoryRecall": policy}}
        scenario.save(update_fields=["workflow"])
    turn = play(api, conversation)
    assert turn.status == "failed" and turn.error_code == "workflow_failed"
    run = WorkflowRun.objects.get(conversation=conversation)
    assert run.error["node"] == "memories" and run.error["cause"] == "bad_input"


def test_continue_without_memory_lets_a_failing_memory_recall_go(
    api, tenant, conversation, model_config, llm
):
    scenario = run_with(tenant, conversation, model_config, [recall_node()])
    policy = {"memoryRecall": "continue_without_memory"}
    scenario.workflow = {**scenario.workflow, "failurePolicy": policy}
    scenario.save(update_fields=["workflow"])
    turn = play(api, conversation)
    assert turn.status == "complete", turn.trace.get("error")
    run = WorkflowRun.objects.get(conversation=conversation)
    assert run.status == "succeeded"
    assert run.nodes[0]["status"] == "failed" and run.nodes[0]["error"]["code"] == "bad_input"
