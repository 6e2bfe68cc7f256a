"""A planning run's record names the stored state and ledger entries its turn read instead
of copying them (``roleplay.agentic.recorded``): the turn's commit writes less, and every
reader (the task, the API, the console, auto-replies) still sees the inputs as the turn
read them, after later revisions and withdrawals too."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.selectors import get_full_history
from roleplay.agentic import recorded
from roleplay.agentic.engine import ledger
from roleplay.agentic.engine.inputs import recorded_guidance
from roleplay.agentic.services import agent_state
from roleplay.conversations.services.messages import edit_message
from roleplay.models import AgentLedgerEntry, PlanningRun
from tests.agentic.test_background_run import say, until
from tests.agentic.world import scripted_world
from tests.ws.test_chat_socket import connect

socket_test = (pytest.mark.asyncio, pytest.mark.django_db(transaction=True))


async def two_turns(tenant, player, character, llm):
    """Two turns whose runs both end: the second turn read revision 1 and its ledger.
    (scenario, conversation, router, the second run, what the second turn read)."""
    scenario, conversation, router = await scripted_world(tenant, player, character, llm)
    comm = await connect(conversation)
    await say(comm, "I promise to bring the key back by dawn.", "r1")
    await until(comm, "planning.completed")
    read = await sync_to_async(agent_state.read_state)(
        conversation, scenario, active_ledger=ledger.NEWEST
    )
    await say(comm, "And now?", "r2")
    second = (await until(comm, "planning.completed"))[-1]
    await comm.disconnect()
    assert second["outcome"] in ("updated", "unchanged"), second
    run = await PlanningRun.objects.aget(turn_id=second["turn_id"])
    return scenario, conversation, router, run, read


@socket_test[0]
@socket_test[1]
async def test_the_record_names_the_state_and_entries_and_every_reader_gets_them_back(
    planning_relay, tenant, player, character, llm
):
    _scenario, conversation, router, run, read = await two_turns(tenant, player, character, llm)
    stored = run.snapshot["inputs"]
    assert "state" not in stored and "entries" not in stored
    assert stored["revision"] == 1 and read.ledger
    assert stored[recorded.ENTRY_IDS] == [entry["id"] for entry in read.ledger]
    assert read.state not in json.dumps(run.snapshot)
    restored = (await sync_to_async(recorded.restore)(run)).snapshot["inputs"]
    assert restored["state"] == read.state
    assert restored["entries"] == read.ledger
    # The task ran on the restored inputs: the Director read the state of revision 1.
    assert read.state.splitlines()[1] in json.dumps(router.seen["director"][-1]["messages"])
    # The guidance made again from the record is the block the turn's Actor read.
    guidance = recorded_guidance(run.snapshot)
    assert guidance in router.seen["actor"][-1]["messages"][-1]["content"]
    assert "one notes." in guidance


@socket_test[0]
@socket_test[1]
async def test_the_inputs_stay_as_the_turn_read_them_after_a_withdrawal(
    planning_relay, tenant, player, character, llm
):
    scenario, conversation, _router, run, read = await two_turns(tenant, player, character, llm)
    # the first player message: every revision built after it is withdrawn
    first_user = (await sync_to_async(conversation_messages)(conversation))[0]
    await sync_to_async(edit_message)(conversation, first_user, "Changed.", editor="player")
    now = await sync_to_async(agent_state.read_state)(conversation, scenario)
    assert now.revision == 0  # both revisions are out of force
    fresh = await PlanningRun.objects.aget(pk=run.pk)
    restored = (await sync_to_async(recorded.restore)(fresh)).snapshot["inputs"]
    assert restored["state"] == read.state and restored["entries"] == read.ledger


def conversation_messages(conversation):
    history = get_full_history(conversation.tenant, str(conversation.pk))
    return [m.id for m in history if m.role == "user"]


@socket_test[0]
@socket_test[1]
async def test_many_runs_are_restored_in_two_statements_and_foreign_ids_are_dropped(
    planning_relay, tenant, player, character, llm
):
    _scenario, conversation, _router, run, read = await two_turns(tenant, player, character, llm)

    def check():
        runs = list(PlanningRun.objects.filter(conversation=conversation))
        assert len(runs) == 2
        foreign = AgentLedgerEntry.objects.exclude(conversation=conversation).first()
        named = next(r for r in runs if recorded.ENTRY_IDS in r.snapshot["inputs"])
        ids = named.snapshot["inputs"][recorded.ENTRY_IDS]
        if foreign is not None:  # another conversation's entry is never read into this one
            named.snapshot["inputs"][recorded.ENTRY_IDS] = [*ids, foreign.pk]
        with CaptureQueriesContext(connection) as queries:
            recorded.restore_all(runs)
        assert len(queries) == 2
        assert named.snapshot["inputs"]["entries"] == read.ledger
        inline = next(r for r in runs if r is not named)  # the first turn read no state
        assert inline.snapshot["inputs"]["state"] is None
        with CaptureQueriesContext(connection) as queries:
            recorded.restore_all([inline])
        assert len(queries) == 0

    await sync_to_async(check)()


def test_slim_names_only_what_is_stored():
    entries = [{"id": 7, "type": "callback", "key": "k", "status": "active", "payload": {}}]
    stored = {"revision": 3, "state": "S", "entries": entries, "query": "q"}
    assert recorded.slim(stored) == {"revision": 3, "query": "q", recorded.ENTRY_IDS: [7]}
    no_state = {"revision": 0, "state": None, "entries": [], "query": "q"}
    assert recorded.slim(no_state) is no_state
    unnamed = {"revision": 3, "state": "S", "entries": [{"type": "callback"}]}
    assert recorded.slim(unnamed) is unnamed
