"""The registered capabilities on their own, against the real database: each checks its node
``input`` against its JSON schema (``bad_input`` naming the field, before any read), and
reads only the run's conversation."""

from __future__ import annotations

import asyncio

import pytest

from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityError

pytestmark = pytest.mark.django_db(transaction=True)


def scope_of(conversation, scenario_id=None):
    return registry.RunScope(
        tenant_id=conversation.tenant_id,
        conversation_id=conversation.pk,
        scenario_id=scenario_id,
        player_id=conversation.player_id,
    )


def call(capability, node_input, query="the gate"):
    payload = CapabilityCall(node_id="n", input=node_input, query=query, dependencies={})
    return asyncio.run(capability.execute(payload, asyncio.Event()))


@pytest.mark.parametrize(
    ("name", "node_input", "field"),
    [
        ("worldbook_search", {"limit": 0}, "input.limit"),
        ("worldbook_search", {"colour": "red"}, "input"),
        ("memory_recall", {"limit": "five"}, "input.limit"),
        ("state_read", {"parts": ["diary"]}, "input.parts.0"),
        ("model_call", {"rolePrompt": "x"}, "input"),
        (
            "model_call",
            {"modelConfigId": "a", "rolePrompt": "x", "emitPrompt": 1},
            "input.emitPrompt",
        ),
    ],
)
def test_a_bad_input_is_refused_with_bad_input(conversation, name, node_input, field):
    capability = registry.build(name, scope_of(conversation))
    with pytest.raises(CapabilityError) as caught:
        call(capability, node_input)
    assert caught.value.code == "bad_input"
    assert caught.value.message.startswith(field)


def test_every_capability_names_itself_and_its_schema():
    for entry in registry.entries():
        assert entry.input_schema["type"] == "object"
        assert entry.description


def test_state_read_and_searches_answer_empty_for_a_fresh_conversation(conversation):
    state = call(registry.build("state_read", scope_of(conversation)), {})
    assert state.value == {"story": None, "agent": None} and state.prompt_content is None
    found = call(registry.build("worldbook_search", scope_of(conversation)), {"mode": "lexical"})
    assert found.value["results"] == [] and found.prompt_content is None


def test_another_tenants_conversation_is_not_found(conversation, other_tenant):
    foreign = registry.RunScope(
        tenant_id=other_tenant.pk,
        conversation_id=conversation.pk,
        scenario_id=None,
        player_id=conversation.player_id,
    )
    with pytest.raises(CapabilityError) as caught:
        call(registry.build("memory_recall", foreign), {})
    assert caught.value.code == "not_found"


def test_memory_recall_finds_the_players_indexed_words_and_clips_to_the_limit(
    tenant, conversation, player, character
):
    from memory import services as message_store
    from memory.recall import indexing

    lines = [
        ("user", "I left my copper key with the harbour master last spring."),
        ("assistant", "Then fetch it before the gate closes."),
        ("user", "Let us talk about the weather instead."),
        ("assistant", "The fog will lift by dawn."),
    ]
    for role, text in lines:
        message_store.save_message(tenant, conversation.session_id, role=role, content=text)
    indexing.index_messages(
        tenant, session_id=conversation.session_id, player_id=player.pk,
        character_id=str(character.pk), conversation_id=conversation.pk,
    )  # fmt: skip
    capability = registry.build("memory_recall", scope_of(conversation))
    found = call(capability, {"query": "where is the copper key", "limit": 1})
    items = found.value["items"]
    assert found.value["runtime"] == "internal" and len(items) == 1
    assert items[0]["kind"] == "message" and "copper key" in items[0]["text"]
    assert "copper key" in found.prompt_content


@pytest.mark.parametrize("runtime", ["off", "external"])
def test_memory_recall_reads_nothing_when_the_scenario_keeps_no_memory_here(
    tenant, conversation, model_config, runtime
):
    from roleplay.models import Scenario

    scenario = Scenario.objects.create(tenant=tenant, name="No memory", memory_runtime=runtime)
    found = call(registry.build("memory_recall", scope_of(conversation, scenario.pk)), {})
    assert found.value == {"query": "the gate", "items": [], "degraded": False, "runtime": runtime}
    assert found.prompt_content is None


def test_state_read_gives_the_agent_state_in_force_read_only(tenant, conversation, model_config):
    from memory import services as message_store
    from roleplay.agentic.services import agent_state
    from roleplay.models import AgentStateRevision
    from roleplay.scenarios.services import create_scenario

    scenario = create_scenario(tenant, name="S", model_config=model_config)
    reply = message_store.save_message(
        tenant, conversation.session_id, role="assistant", content="Here."
    )
    agent_state.commit(
        conversation, scenario, expected_head=0, state="The guard distrusts keys.",
        tools_called=[], source_turn=1, source_message_id=reply.pk,
    )  # fmt: skip
    capability = registry.build("state_read", scope_of(conversation, scenario.pk))
    found = call(capability, {"parts": ["agent"]})
    assert found.value["agent"]["state"] == "The guard distrusts keys."
    assert found.value["agent"]["revision"] == 1 and found.value["story"] is None
    assert found.prompt_content == "[STATE]\nThe guard distrusts keys."
    assert AgentStateRevision.objects.filter(conversation=conversation).count() == 1
