"""The Agent V2 state over REST: the read shape of the scenario a conversation runs, the
revisions newest first, and a restore by compare-and-set."""

from __future__ import annotations

import pytest

from memory import services as message_store
from roleplay.agentic.services import agent_state
from roleplay.models import ModelConfig
from roleplay.scenarios.services import create_scenario
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db


def _url(conversation, tail=""):
    return f"/api/v1/conversations/{conversation.pk}/agent-state{tail}"


def test_no_scenario_no_state(api, conversation):
    body = api.get(_url(conversation)).json()
    assert body["scenario"] is None and body["found"] is False and body["revision"] == 0
    assert api.get(_url(conversation, "/revisions/")).json() == {"results": []}
    assert_error(api.post(_url(conversation, "/restore"), {"revision": 1}, format="json"), 404,
                 "not_found")  # fmt: skip


def test_read_revisions_and_restore(api, tenant, conversation):
    config = ModelConfig.objects.create(tenant=tenant, name="a", provider="llama_cpp", model="m")
    scenario = create_scenario(tenant, name="S", model_config=config)
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    reply = message_store.save_message(
        tenant, conversation.session_id, role="assistant", content="r"
    )
    for head, text in enumerate(["one", "two"]):
        agent_state.commit(
            conversation, scenario, expected_head=head, state=text, tools_called=["judge_npc"],
            source_turn=head + 1, source_message_id=reply.pk,
        )  # fmt: skip
    body = api.get(_url(conversation)).json()
    assert body["scenario"] == str(scenario.pk) and body["revision"] == 2
    assert body["state"] == "two" and body["toolsCalled"] == ["judge_npc"]
    revisions = api.get(_url(conversation, "/revisions/")).json()["results"]
    assert [(r["revision"], r["state"], r["origin"]) for r in revisions] == [
        (2, "two", "director"),
        (1, "one", "director"),
    ]
    restored = api.post(_url(conversation, "/restore"), {"revision": 1}, format="json")
    assert restored.status_code == 200 and restored.json() == {"revision": 3}
    assert api.get(_url(conversation)).json()["state"] == "one"
    missing = api.post(_url(conversation, "/restore"), {"revision": 9}, format="json")
    assert_error(missing, 404, "not_found")
    bad = api.post(_url(conversation, "/restore"), {"revision": 0}, format="json")
    assert_error(bad, 400, "validation_error")


def test_each_ledger_item_carries_its_source_tool_and_turn(api, tenant, conversation):
    """Seed 002 lines 89–115: the read shape's ledger items carry ``sourceTool`` and
    ``sourceTurn`` beside ``type``, ``key``, ``status`` and ``payload``."""
    from roleplay.agentic.engine.ledger import entry_for

    config = ModelConfig.objects.create(tenant=tenant, name="a", provider="llama_cpp", model="m")
    scenario = create_scenario(tenant, name="S", model_config=config)
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    reply = message_store.save_message(
        tenant, conversation.session_id, role="assistant", content="r"
    )
    entry = entry_for("manage_callbacks", 8, "the key is handed over", "I hand her the key.")
    agent_state.commit(
        conversation, scenario, expected_head=0, state="s", tools_called=["manage_callbacks"],
        source_turn=8, source_message_id=reply.pk, ledger_entries=[entry],
    )  # fmt: skip
    (item,) = api.get(_url(conversation)).json()["ledger"]
    assert item == {
        "type": "callback",
        "key": "manage_callbacks:turn:8",
        "status": "active",
        "payload": entry["payload"],
        "sourceTool": "manage_callbacks",
        "sourceTurn": 8,
    }
