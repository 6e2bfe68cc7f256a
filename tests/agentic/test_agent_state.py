"""Agent V2's state against the real database (``roleplay.agentic.services.agent_state``): the one
compare-and-set commit with its ledger entries, a stale write rejected and nothing written,
an ambiguous retry recognised, a rolled-back reply's revision skipped on read, restores,
and the history counter."""

from __future__ import annotations

import json
import uuid

import pytest

from memory import services as message_store
from roleplay.agentic.engine.ledger import entry_for
from roleplay.agentic.services import agent_state
from roleplay.models import (
    AgentLedgerEntry,
    AgentStateRevision,
    Character,
    Conversation,
    ModelConfig,
)
from roleplay.scenarios.services import create_scenario

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def scenario(tenant):
    config = ModelConfig.objects.create(tenant=tenant, name="a", provider="llama_cpp", model="m")
    return create_scenario(tenant, name="S", model_config=config)


def _reply(tenant, conversation, text="Reply."):
    return message_store.save_message(
        tenant, conversation.session_id, role="assistant", content=text
    )


def _commit(conversation, scenario, head, state, reply, ledger=()):
    return agent_state.commit(
        conversation, scenario, expected_head=head, state=state, tools_called=["judge_npc"],
        source_turn=head + 1, source_message_id=reply.pk, ledger_entries=list(ledger),
    )  # fmt: skip


def test_commit_then_read_with_the_ledger(tenant, conversation, scenario):
    empty = agent_state.read_state(conversation, scenario)
    assert empty.as_read() == {
        "found": False, "revision": 0, "sourceTurn": None, "sourceMessageId": None,
        "historyRevision": 0, "state": None, "toolsCalled": [], "ledger": [],
    }  # fmt: skip
    reply = _reply(tenant, conversation)
    entry = entry_for("manage_callbacks", 1, "A promise to return the key.", "Here.")
    assert _commit(conversation, scenario, 0, "state one", reply, [entry]) == 1
    read = agent_state.read_state(conversation, scenario).as_read()
    assert read["found"] and read["revision"] == 1 and read["state"] == "state one"
    assert read["sourceMessageId"] == str(reply.pk) and read["toolsCalled"] == ["judge_npc"]
    assert read["ledger"] == [
        {**{k: entry[k] for k in ("type", "key", "status", "payload")},
         "sourceTool": "manage_callbacks", "sourceTurn": 1}
    ]  # fmt: skip


def test_a_stale_write_is_rejected_and_writes_nothing(tenant, conversation, scenario):
    reply = _reply(tenant, conversation)
    _commit(conversation, scenario, 0, "one", reply)
    _commit(conversation, scenario, 1, "two", reply)
    entry = entry_for("judge_npc", 3, "late", "q")
    with pytest.raises(agent_state.StaleWrite) as stale:
        _commit(conversation, scenario, 1, "late", reply, [entry])
    assert stale.value.code == "stale_write_rejected"
    with pytest.raises(agent_state.StaleWrite):
        _commit(conversation, scenario, 0, "also late", reply)
    assert AgentStateRevision.objects.count() == 2 and not AgentLedgerEntry.objects.exists()


def test_an_ambiguous_retry_recognises_its_own_success(tenant, conversation, scenario):
    reply = _reply(tenant, conversation)
    assert _commit(conversation, scenario, 0, "one", reply) == 1
    assert _commit(conversation, scenario, 0, "one", reply) == 1  # the same write again
    assert AgentStateRevision.objects.count() == 1


def test_a_rolled_back_reply_takes_its_revision_out_of_force(tenant, conversation, scenario):
    first, second = _reply(tenant, conversation, "a"), _reply(tenant, conversation, "b")
    _commit(conversation, scenario, 0, "from the first reply", first)
    _commit(conversation, scenario, 1, "from the second reply", second)
    message_store.delete_messages_by_timestamps(tenant, conversation.session_id, [second.ts])
    snapshot = agent_state.read_state(conversation, scenario)
    assert (snapshot.revision, snapshot.head, snapshot.state) == (1, 2, "from the first reply")
    assert snapshot.history_revision == 1  # the rollback was counted
    third = _reply(tenant, conversation, "c")
    assert _commit(conversation, scenario, snapshot.head, "after the rollback", third) == 3
    assert agent_state.read_state(conversation, scenario).state == "after the rollback"


def test_a_rolled_back_replys_ledger_entries_stay_out_after_a_new_revision(
    tenant, conversation, scenario
):
    first, second = _reply(tenant, conversation, "a"), _reply(tenant, conversation, "b")
    kept = entry_for("manage_callbacks", 1, "Open: the lantern", "one")
    gone = entry_for("manage_callbacks", 2, "Open: the code word", "two")
    _commit(conversation, scenario, 0, "one", first, [kept])
    _commit(conversation, scenario, 1, "two", second, [gone])
    message_store.delete_messages_by_timestamps(tenant, conversation.session_id, [second.ts])
    # the next turn commits over the rolled-back revision's number
    snapshot = agent_state.read_state(conversation, scenario)
    third = _reply(tenant, conversation, "c")
    _commit(conversation, scenario, snapshot.head, "three", third)
    entries = agent_state.read_state(conversation, scenario).ledger
    texts = json.dumps(entries)
    assert "the lantern" in texts and "the code word" not in texts


def test_restore_writes_a_new_revision_by_compare_and_set(tenant, conversation, scenario):
    reply = _reply(tenant, conversation)
    _commit(conversation, scenario, 0, "one", reply)
    _commit(conversation, scenario, 1, "two", reply)
    assert agent_state.restore(conversation, scenario, 1, expected_head=2) == 3
    assert agent_state.read_state(conversation, scenario).state == "one"
    # The same restore sent again is recognised; another one on the old head is stale.
    assert agent_state.restore(conversation, scenario, 1, expected_head=2) == 3
    with pytest.raises(agent_state.StaleWrite):
        agent_state.restore(conversation, scenario, 2, expected_head=2)
    with pytest.raises(agent_state.NotFound):
        agent_state.restore(conversation, scenario, 9, expected_head=3)


def test_states_are_apart_per_scenario_and_conversation(tenant, conversation, scenario):
    other = create_scenario(tenant, name="Other")
    _commit(conversation, scenario, 0, "mine", _reply(tenant, conversation))
    assert not agent_state.read_state(conversation, other).found
    assert agent_state.read_state(conversation, scenario).source_message_id != str(uuid.uuid4())


def test_ten_concurrent_commits_on_one_head_make_one_revision(tenant, conversation, scenario):
    from tests.races import race

    reply = _reply(tenant, conversation)
    _commit(conversation, scenario, 0, "base", reply)

    def write(_client, i):
        try:
            return _commit(conversation, scenario, 1, f"writer {i}", reply)
        except agent_state.StaleWrite:
            return "stale"

    results = race([None] * 10, write)
    assert sorted(results, key=str) == [2] + ["stale"] * 9
    assert AgentStateRevision.objects.filter(revision=2).count() == 1


def test_the_turns_read_takes_only_the_newest_active_entries(tenant, conversation, scenario):
    reply = _reply(tenant, conversation)
    entries = [
        {**entry_for("judge_npc", i, f"note {i}", "q"), "status": "active" if i % 7 else "done"}
        for i in range(1, 71)
    ]
    _commit(conversation, scenario, 0, "state", reply, entries)
    every = agent_state.read_state(conversation, scenario).ledger
    assert [e["key"] for e in every] == [e["key"] for e in entries]
    newest = agent_state.read_state(conversation, scenario, active_ledger=60).ledger
    active = [e for e in entries if e["status"] == "active"]
    assert [e["key"] for e in newest] == [e["key"] for e in active[-60:]]


def _turn_read(conversation, scenario):
    """The state a turn reads with its conversation equals ``read_state``'s for the newest
    ``ledger.NEWEST`` active entries (the fast path pinned to the slow one)."""
    from roleplay.agentic.engine.ledger import NEWEST
    from roleplay.turns.reads import turn_conversation

    read = turn_conversation(conversation.pk)
    read_scenario, state = read.scenario, read.agent_state
    assert read_scenario == scenario
    assert state == agent_state.read_state(conversation, scenario, active_ledger=NEWEST)
    return state


def test_the_turns_first_read_carries_the_state_in_force(tenant, conversation, scenario):
    from roleplay.turns.reads import turn_conversation

    assert turn_conversation(conversation.pk)[3] == agent_state.EMPTY  # no scenario at all
    Conversation.objects.filter(pk=conversation.pk).update(scenario=scenario)
    assert _turn_read(conversation, scenario) == agent_state.EMPTY  # no state yet
    first, second = _reply(tenant, conversation, "a"), _reply(tenant, conversation, "b")
    entries = [
        {**entry_for("judge_npc", i, f"note {i}", "q"), "status": "active" if i % 7 else "done"}
        for i in range(1, 71)
    ]
    _commit(conversation, scenario, 0, "one", first, entries)
    _commit(conversation, scenario, 1, "two", second, [entry_for("direct_scene", 2, "x", "q")])
    assert _turn_read(conversation, scenario).state == "two"
    message_store.delete_messages_by_timestamps(tenant, conversation.session_id, [second.ts])
    rolled_back = _turn_read(conversation, scenario)
    assert (rolled_back.revision, rolled_back.head, len(rolled_back.ledger)) == (1, 2, 60)
    # the character's default scenario, when the conversation names none
    other = create_scenario(tenant, name="Other")
    Conversation.objects.filter(pk=conversation.pk).update(scenario=None)
    Character.objects.filter(pk=conversation.character_id).update(default_scenario=other)
    assert _turn_read(conversation, other) == agent_state.EMPTY
