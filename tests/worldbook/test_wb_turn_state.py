"""What a chat turn gives worldbook selection (seed 002, the Harness's worldbook wiring):
the turn's ``state`` for the entries' ``conditions`` (Agent V2's state, the Story in force,
the turn's macro variables), a query of the input plus the public scene, and the strategy
and token budget of the scenario's ``worldbook`` object.

Read through the preset editor's preview, which loads the context exactly as a chat turn
does (every hook, nothing written); ``test_a_chat_turn_reads_its_state`` sends a message."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from memory import services as message_store
from roleplay.agentic.services import agent_state
from roleplay.models import Turn
from roleplay.presets.selectors import effective_preset
from roleplay.prompting.director_state import DIRECTOR_STATE_HEADER, DIRECTOR_STATE_SECTIONS
from roleplay.scenarios.services import ScenarioConfigInvalid, create_scenario, update_scenario
from roleplay.turns.preview import preview_prompt
from story import services as story_services
from story.engine.world import Foreground, World
from tests.agentic.world import make_world
from worldbook import services
from worldbook.engine.schema import BookIn

pytestmark = pytest.mark.django_db

QUEST_ON = {"path": "quest.started", "op": "eq", "value": True}
JSON_STATE = {
    "quest": {"started": True, "giver": "the harbour master"},
    "current_scene": {"location": "the north gate", "time": "dusk", "situation": "rain"},
}


def _bind(tenant, character, *entries):
    book, _ = services.create_book(
        tenant, BookIn.model_validate({"name": "Rules", "entries": list(entries)})
    )
    services.put_bindings(tenant, str(character.id), [{"book_id": str(book.id)}])
    return book


def _entry(entry_id, **fields):
    return {"id": entry_id, "content": f"The {entry_id} rule.", **fields}


def _commit(tenant, conversation, scenario, state: str) -> None:
    reply = message_store.save_message(
        tenant, conversation.session_id, role="assistant", content="The guard waits."
    )
    agent_state.commit(
        conversation, scenario, expected_head=0, state=state, tools_called=[],
        source_turn=1, source_message_id=reply.pk,
    )  # fmt: skip


def _selection(conversation, text="I wait.") -> tuple[set[str], dict]:
    """(the entry ids the next turn selects, the selection request it records)."""
    preview = preview_prompt(conversation, effective_preset(conversation.model_config), text)
    chosen = {s["id"].rsplit(":", 1)[-1] for s in preview.worldbook.get("selected", [])}
    return chosen, preview.worldbook["replay"]["request"]


def _section_state(scene: str) -> str:
    notes = {section: "none yet." for section in DIRECTOR_STATE_SECTIONS}
    notes["Current scene"] = scene
    return DIRECTOR_STATE_HEADER + "\n" + "\n".join(f"{k}: {v}" for k, v in notes.items())


def test_conditions_read_agent_v2_json_state_and_its_scene_joins_the_query(
    tenant, player, character, llm
):
    scenario, _configs, conversation = make_world(tenant, player, character, llm)
    _bind(
        tenant,
        character,
        _entry("quest", constant=True, conditions=[QUEST_ON]),
        _entry("idle", constant=True, conditions=[{**QUEST_ON, "value": False}]),
        _entry("gate", keys=["north gate"]),
        _entry("giver", constant=True, conditions=[{"path": "quest.giver", "op": "exists"}]),
    )
    _commit(tenant, conversation, scenario, json.dumps(JSON_STATE))
    chosen, request = _selection(conversation)
    assert chosen == {"quest", "gate", "giver"}
    assert request["query"] == "I wait.\nthe north gate; dusk; rain"
    assert request["state"]["quest"] == JSON_STATE["quest"]
    assert request["state"]["agentic"]["revision"] == 1


def test_a_section_text_state_gives_its_sections_and_current_scene(tenant, player, character, llm):
    scenario, _configs, conversation = make_world(tenant, player, character, llm)
    _bind(
        tenant,
        character,
        _entry("quest", constant=True, conditions=[QUEST_ON]),
        _entry("gate", keys=["north gate"]),
        _entry(
            "scene",
            constant=True,
            conditions=[{"path": "agentic.sections.Current scene", "op": "exists"}],
        ),
    )
    _commit(tenant, conversation, scenario, _section_state("At the north gate,\n  at dusk."))
    chosen, request = _selection(conversation)
    assert chosen == {"gate", "scene"}  # no JSON: quest.started is absent
    assert request["query"] == "I wait.\nAt the north gate, at dusk."
    assert "quest" not in request["state"]


def test_conditions_read_the_story_in_force(tenant, player, character, conversation, model_config):
    scenario = create_scenario(
        tenant,
        name="Story",
        model_config=model_config,
        storyV1={"enabled": True, "modelConfigId": str(model_config.pk)},
    )
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    world = World(foreground=Foreground(id="w1", title="The gate at dusk", phase="develop"))
    world.round = 3
    envelope = {
        "world": world.as_json(),
        "event": {"id": "e2", "title": "The gate at dusk"},
        "pendingActor": {"prepared": {"flags": {"interrupted": True, "switchedTo": "w4"}}},
    }
    story_services.save(
        story_services.Save(
            tenant_id=tenant.pk, conversation_id=conversation.pk, scenario_id=scenario.pk,
            character_id=character.pk, expected=0, envelope=envelope, status="ready",
            outcome="initialised",
        )
    )  # fmt: skip
    _bind(
        tenant,
        character,
        _entry("develop", constant=True, conditions=[
            {"path": "story.foreground.phase", "op": "eq", "value": "develop"},
            {"path": "story.round", "op": "in", "value": [2, 3]},
        ]),
        _entry("switched", constant=True, conditions=[
            {"path": "story.flags.switchedTo", "op": "eq", "value": "w4"},
        ]),
        _entry("ended", constant=True, conditions=[
            {"path": "story.foreground.phase", "op": "eq", "value": "end"},
        ]),
    )  # fmt: skip
    chosen, request = _selection(conversation)
    assert chosen == {"develop", "switched"}
    assert request["state"]["story"] == {
        "revision": 1,
        "round": 3,
        "event": "e2",
        "foreground": {"id": "w1", "title": "The gate at dusk", "phase": "develop"},
        "flags": {"interrupted": True, "switchedTo": "w4"},
    }


def test_the_scenarios_worldbook_object_sets_strategy_and_budget(
    tenant, character, conversation, model_config
):
    _bind(tenant, character, _entry("always", constant=True))
    scenario = create_scenario(tenant, name="Plain", model_config=model_config)
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    _chosen, request = _selection(conversation)
    assert (request["strategy"], request["token_budget"]) == ("hybrid", 2400)  # the Harness's
    assert scenario.worldbook is None

    update_scenario(
        scenario,
        version=scenario.version,
        worldbook={"tenantId": tenant.name, "strategy": "rules", "tokenBudget": 300},
    )
    assert scenario.worldbook == {"tenantId": tenant.name, "strategy": "rules", "tokenBudget": 300}
    conversation.refresh_from_db()
    _chosen, request = _selection(conversation)
    assert request.get("strategy", "rules") == "rules" and request["token_budget"] == 300


@pytest.mark.parametrize(
    ("worldbook", "field"),
    [
        ({"strategy": "vector"}, "worldbook.strategy"),
        ({"tokenBudget": 32_001}, "worldbook.tokenBudget"),
        ({"tokenBudget": "2400"}, "worldbook.tokenBudget"),
        ({"token_budget": 100}, "worldbook.token_budget"),
        ({"tenantId": "globex"}, "worldbook.tenantId"),
    ],
)
def test_a_bad_worldbook_object_names_its_field(tenant, model_config, worldbook, field):
    with pytest.raises(ScenarioConfigInvalid) as caught:
        create_scenario(tenant, name="Bad", model_config=model_config, worldbook=worldbook)
    assert caught.value.details["field"] == field


def test_the_api_answers_the_worldbook_object(api_client_for, tenant):
    api = api_client_for(tenant)
    created = api.post(
        "/api/v1/scenarios/",
        {"name": "WB", "worldbook": {"tenantId": str(tenant.pk), "tokenBudget": 1000}},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["worldbook"] == {
        "tenantId": str(tenant.pk),
        "strategy": "hybrid",
        "tokenBudget": 1000,
    }
    refused = api.post(
        "/api/v1/scenarios/", {"name": "WB2", "worldbook": {"tenantId": "x"}}, format="json"
    )
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["field"] == "worldbook.tenantId"


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_chat_turn_reads_its_state(tenant, player, character, llm):
    from tests.ws.test_chat_socket import connect, receive_until

    def setup():
        scenario, _configs, conversation = make_world(tenant, player, character, llm)
        _bind(tenant, character, _entry("quest", constant=True, conditions=[QUEST_ON]))
        _commit(tenant, conversation, scenario, json.dumps(JSON_STATE))
        return conversation

    conversation = await sync_to_async(setup)()
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "s1", "content": "Hi"})
    )
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed", events[-1]
    turn = await Turn.objects.aget(pk=events[0]["turn_id"])
    assert [s["id"].rsplit(":", 1)[-1] for s in turn.trace["worldbook"]["selected"]] == ["quest"]
    actor = next(r for r in llm.requests if r["model"] == "actor-model")
    assert any("The quest rule." in str(m["content"]) for m in actor["messages"])
    await comm.disconnect()
