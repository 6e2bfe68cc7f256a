"""Every derived layer starts a branch from the revision in force at the fork point, as a
rollback to that point would leave it (docs/branches.md): Agent V2's state with its ledger,
Story's envelope, memory documents; the parent keeps its own. A turn in the branch reads
that state."""

from __future__ import annotations

import pytest

from memory import services as message_store
from memory.documents import selectors as documents
from memory.documents import services as document_writes
from roleplay.agentic.engine.ledger import entry_for
from roleplay.agentic.services import agent_state
from roleplay.branches import services as branches
from roleplay.models import AgentStateRevision, ModelConfig
from roleplay.scenarios.services import create_scenario
from story import selectors as story_reads
from story.models import StoryRevision
from tests.story.story_rows import envelope, write

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def scenario(tenant):
    config = ModelConfig.objects.create(tenant=tenant, name="a", provider="llama_cpp", model="m")
    return create_scenario(tenant, name="S", model_config=config)


def _exchanges(tenant, conversation, scenario, n):
    """``n`` exchanges, each reply the source of a state revision with one ledger entry."""
    said = []
    for turn in range(1, n + 1):
        user = message_store.save_message(
            tenant, conversation.session_id, role="user", content=f"Turn {turn}: W{turn}."
        )
        reply = message_store.save_message(
            tenant, conversation.session_id, role="assistant", content=f"Reply {turn}."
        )
        entry = entry_for("manage_callbacks", turn, f"remember W{turn}", user.content)
        head = agent_state.read_state(conversation, scenario).head
        agent_state.commit(
            conversation, scenario, expected_head=head, state=f"state {turn}",
            tools_called=["manage_callbacks"], source_turn=turn, source_message_id=reply.pk,
            ledger_entries=[entry],
        )  # fmt: skip
        said.append((user, reply))
    return said


def test_agent_state_starts_at_the_revision_in_force_at_the_fork(tenant, conversation, scenario):
    said = _exchanges(tenant, conversation, scenario, 3)
    branch = branches.create_branch(conversation, said[1][1].id)  # after the second reply
    state = agent_state.read_state(branch, scenario)
    assert (state.revision, state.state) == (1, "state 2")
    assert [e["payload"]["analysis"] for e in state.ledger] == ["remember W1", "remember W2"]
    assert AgentStateRevision.objects.get(conversation=branch).origin == "branch"
    assert agent_state.read_state(conversation, scenario).state == "state 3"  # the parent's
    # at a player message, its reply's revision is not in force yet
    earlier = branches.create_branch(conversation, said[1][0].id)
    assert agent_state.read_state(earlier, scenario).state == "state 1"
    # before the first reply: no state at all
    none = branches.create_branch(conversation, said[0][0].id)
    assert agent_state.read_state(none, scenario).state is None
    # a branch of the branch starts from the branch's own revision
    nested = branches.create_branch(branch, said[0][1].id)
    assert agent_state.read_state(nested, scenario).state == "state 1"


def test_story_starts_at_the_revision_saved_before_the_fork(tenant, conversation, scenario):
    said = [
        message_store.save_message(tenant, conversation.session_id, role=r, content=t)
        for r, t in (("user", "u1"), ("assistant", "a1"), ("user", "u2"), ("assistant", "a2"))
    ]
    write(conversation, scenario, 0, envelope(conversation, title="first"), source_position=1)
    write(conversation, scenario, 1, envelope(conversation, title="second"), source_position=3)
    branch = branches.create_branch(conversation, said[1].id)  # two chat messages
    revision, story = story_reads.read_for_turn(branch.pk, scenario.pk)
    assert revision == 1
    assert story["world"]["foreground"]["title"] == "first"
    assert StoryRevision.objects.get(conversation_id=branch.pk).outcome == "branched"
    later = branches.create_branch(conversation, said[3].id)
    assert story_reads.read_for_turn(later.pk, scenario.pk)[1]["world"]["foreground"][
        "title"
    ] == "second"  # fmt: skip
    before = branches.create_branch(conversation, said[0].id)
    assert story_reads.read_for_turn(before.pk, scenario.pk) == (0, None)
    assert story_reads.read_for_turn(conversation.pk, scenario.pk)[0] == 2  # the parent's


def test_memory_documents_start_as_they_were_at_the_fork(tenant, conversation):
    session = conversation.session_id
    document_writes.put_document(tenant, session, "default", 0, {"scene": "gate"}, origin="api")
    fork_point = message_store.save_message(tenant, session, role="user", content="at the gate")
    document_writes.put_document(tenant, session, "default", 1, {"scene": "hall"}, origin="api")
    branch = branches.create_branch(conversation, fork_point.id)
    shared = documents.read_document(tenant, branch.session_id, "default")
    assert shared == {"revision": 1, "memory": {"scene": "gate"}}
    assert documents.read_document(tenant, session, "default")["memory"] == {"scene": "hall"}


def test_a_branch_of_a_branch_finds_the_story_and_documents_up_the_chain(
    tenant, conversation, scenario
):
    said = [
        message_store.save_message(tenant, conversation.session_id, role=r, content=t)
        for r, t in (("user", "u1"), ("assistant", "a1"), ("user", "u2"), ("assistant", "a2"))
    ]
    write(conversation, scenario, 0, envelope(conversation, title="first"), source_position=1)
    write(conversation, scenario, 1, envelope(conversation, title="second"), source_position=3)
    first = branches.create_branch(conversation, said[3].id)  # starts with "second"
    nested = branches.create_branch(first, said[1].id)  # shared by the root: "first"
    story = story_reads.read_for_turn(nested.pk, scenario.pk)[1]
    assert story["world"]["foreground"]["title"] == "first"
    assert nested.parent_id == first.pk


def test_compact_checkpoint_starts_from_the_parents_within_the_shared_part(
    conversation, model_config
):
    from roleplay.compact import selectors as compact_reads
    from roleplay.compact.engine import checkpoint as cp
    from roleplay.models import CompactCheckpoint
    from tests.compact.checkpoint_rows import STRUCTURED, compact_scenario, said, save

    scenario = compact_scenario(conversation, model_config)
    messages = said(conversation)
    save(conversation, scenario, messages, covered=2)  # version 1: the first exchange
    parent_top = save(conversation, scenario, messages, expected=1, covered=4)  # version 2

    # After the fourth message: version 2 covers only shared history, and is carried.
    branch = branches.create_branch(conversation, messages[4].id)
    row = CompactCheckpoint.objects.get(conversation=branch)
    assert (row.version, row.chain, row.status, row.summary) == (1, None, "active", STRUCTURED)
    assert row.audit["branched_from"] == [str(conversation.pk), 2]
    covered = compact_reads.covered_messages(branch, row)  # as the branch's turn checks it
    assert covered is not None and cp.fingerprint(covered) == row.fingerprint
    assert [str(m.pk) for m in covered] == [str(m.pk) for m in messages[:4]]

    # At the third message: version 2 reaches past the fork, so the branch starts from 1.
    early = branches.create_branch(conversation, messages[2].id)
    assert CompactCheckpoint.objects.get(conversation=early).last_message_id == messages[1].id
    # Before any covered end: nothing to carry.
    first = branches.create_branch(conversation, messages[0].id)
    assert not CompactCheckpoint.objects.filter(conversation=first).exists()
    # The parent keeps its own versions; a branch of the branch finds the root's version 2.
    assert CompactCheckpoint.objects.filter(conversation=conversation).count() == 2
    assert CompactCheckpoint.objects.get(pk=parent_top.pk).status == "active"
    deeper = branches.create_branch(branch, messages[4].id)
    assert CompactCheckpoint.objects.get(conversation=deeper).fingerprint == row.fingerprint
