"""A message the Agent V2 state was built from changes (an edit, a chosen alternative, a
delete of that one message): every revision built from it leaves force with its ledger
entries, as a rollback takes them, so the next turn reads the revision from before the
message; and a background run still in flight from before the change cannot commit."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from memory import alternatives
from memory import services as message_store
from roleplay.agentic.engine.ledger import entry_for
from roleplay.agentic.services import agent_state, planning
from roleplay.conversations.services import messages
from roleplay.models import AgentStateRevision, ModelConfig, PlanningRun, Turn
from roleplay.scenarios.services import create_scenario
from tests.agentic.test_background_run import say, until
from tests.agentic.world import scripted_world
from tests.ws.test_chat_socket import connect

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def scenario(tenant):
    config = ModelConfig.objects.create(tenant=tenant, name="a", provider="llama_cpp", model="m")
    return create_scenario(tenant, name="S", model_config=config)


def _say(tenant, conversation, role, text):
    return message_store.save_message(tenant, conversation.session_id, role=role, content=text)


def _turns(tenant, conversation, scenario, n):
    """``n`` exchanges, each turn's revision built from its player message (source: its
    reply), with a ledger entry quoting what the player said; the player messages."""
    said = []
    for turn in range(1, n + 1):
        user = _say(tenant, conversation, "user", f"Turn {turn}: the word is W{turn}.")
        reply = _say(tenant, conversation, "assistant", f"Reply {turn}.")
        entry = entry_for("manage_callbacks", turn, f"remember W{turn}", user.content)
        head = agent_state.read_state(conversation, scenario).head
        agent_state.commit(
            conversation, scenario, expected_head=head,
            state=f"state of turn {turn}: W1..W{turn}", tools_called=["manage_callbacks"],
            source_turn=turn, source_message_id=reply.pk, ledger_entries=[entry],
        )  # fmt: skip
        said.append((user, reply))
    return said


def test_an_edited_player_message_takes_the_revisions_built_from_it_out_of_force(
    tenant, conversation, scenario
):
    said = _turns(tenant, conversation, scenario, 3)
    user2 = said[1][0]
    messages.edit_message(conversation, user2.pk, "Turn 2: never mind.", editor="player")
    read = agent_state.read_state(conversation, scenario)
    assert read.revision == 1 and read.state == "state of turn 1: W1..W1"
    texts = json.dumps(read.ledger)
    assert "W1" in texts and "W2" not in texts and "W3" not in texts
    assert read.head == 4  # moved on: a run from before the edit is stale
    withdrawn = AgentStateRevision.objects.filter(withdrawn_at__isnull=False)
    assert sorted(withdrawn.values_list("revision", flat=True)) == [2, 3]
    # the next turn writes over it, and its entries count again from there
    reply = _say(tenant, conversation, "assistant", "Reply 4.")
    entry = entry_for("manage_callbacks", 4, "remember W4", "four")
    agent_state.commit(
        conversation, scenario, expected_head=read.head, state="state of turn 4",
        tools_called=[], source_turn=4, source_message_id=reply.pk, ledger_entries=[entry],
    )  # fmt: skip
    after = agent_state.read_state(conversation, scenario)
    assert after.state == "state of turn 4"
    assert "W2" not in json.dumps(after.ledger) and "W4" in json.dumps(after.ledger)


def test_an_edited_reply_withdraws_only_the_revisions_that_read_it(tenant, conversation, scenario):
    """A turn's background never reads its own reply: editing reply 2 leaves revision 2
    (built from player message 2) and withdraws revision 3 (whose history held reply 2)."""
    said = _turns(tenant, conversation, scenario, 3)
    messages.edit_message(conversation, said[1][1].pk, "Reply 2, edited.", editor="player")
    assert agent_state.read_state(conversation, scenario).revision == 2


def test_an_edit_of_the_last_reply_withdraws_nothing(tenant, conversation, scenario):
    said = _turns(tenant, conversation, scenario, 2)
    messages.edit_message(conversation, said[1][1].pk, "Reply 2, edited.", editor="player")
    read = agent_state.read_state(conversation, scenario)
    assert (read.revision, read.head) == (2, 2)


def test_choosing_another_alternative_of_an_earlier_reply_withdraws_what_read_it(
    tenant, conversation, scenario
):
    said = _turns(tenant, conversation, scenario, 3)
    reply1 = said[0][1]
    alternatives.add_alternative(tenant, reply1.pk, content="Reply 1, again.", status="complete")
    messages.select_alternative(conversation, reply1.pk, 0)
    assert agent_state.read_state(conversation, scenario).revision == 1


def test_deleting_one_player_message_withdraws_what_was_built_from_it(
    tenant, conversation, scenario
):
    """A delete of one message (the REST rollback takes any timestamps), its reply kept."""
    said = _turns(tenant, conversation, scenario, 3)
    user2 = said[1][0]
    message_store.delete_messages_by_timestamps(tenant, conversation.session_id, [user2.ts])
    read = agent_state.read_state(conversation, scenario)
    assert read.revision == 1 and "W2" not in json.dumps(read.ledger)


@pytest.mark.asyncio
async def test_a_background_run_in_flight_when_its_message_is_edited_cannot_commit(
    tenant, player, character, llm
):
    scenario, conversation, _router = await scripted_world(tenant, player, character, llm)
    comm = await connect(conversation)
    await say(comm, "The code word is FACT-GONE.", "e1")
    events = await until(comm, "turn.completed")
    await comm.disconnect()
    run = await PlanningRun.objects.aget(turn_id=events[-1]["turn_id"])
    turn = await Turn.objects.aget(pk=run.turn_id)
    await sync_to_async(messages.edit_message)(
        conversation, turn.user_message_id, "The code word is gone.", editor="player"
    )
    outcome = await sync_to_async(planning.execute)(str(run.pk))
    assert outcome == "stale_write_rejected"
    read = await sync_to_async(agent_state.read_state)(conversation, scenario)
    assert read.found is False
