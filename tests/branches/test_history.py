"""Branch resolution: a branch's history is its parent's up to the fork point followed by its
own, through every read of the message store, for a branch of a branch too."""

from __future__ import annotations

from memory import forks
from memory import selectors as message_reads
from roleplay.branches import services as branches
from tests.branches.conftest import say


def contents(rows) -> list[str]:
    return [m.content for m in rows]


def test_a_branch_reads_the_parent_prefix_then_its_own(tenant, conversation, history):
    branch = branches.create_branch(conversation, history[3].id)
    say(tenant, branch, "b-u", "b-a")
    expected = ["u0", "a1", "u2", "a3", "b-u", "b-a"]
    assert contents(message_reads.get_history(tenant, branch.session_id)) == expected
    lines = message_reads.get_history_lines(tenant, branch.session_id)
    assert [line[3] for line in lines] == expected
    assert [line[0] for line in lines] == [
        m.id for m in message_reads.get_history(tenant, branch.session_id)
    ]
    assert contents(message_reads.get_full_history(tenant, branch.session_id)) == expected
    assert message_reads.count_chat_messages(tenant, branch.session_id) == 6
    assert message_reads.last_message(tenant, branch.session_id).content == "b-a"
    # the limit takes the newest, across the fork
    assert contents(message_reads.get_history(tenant, branch.session_id, 3)) == ["a3", "b-u", "b-a"]
    lines = message_reads.get_history_lines(tenant, branch.session_id, 3)
    assert [line[3] for line in lines] == ["a3", "b-u", "b-a"]
    # the parent is as it was; no message was copied
    assert contents(message_reads.get_history(tenant, conversation.session_id)) == [
        "u0", "a1", "u2", "a3", "u4", "a5"
    ]  # fmt: skip
    texts = message_reads.message_texts(branch.session_id, [str(m.id) for m in history])
    assert set(texts) == {str(m.id) for m in history[:4]}


def test_a_branch_of_a_branch_cuts_each_lineage_at_its_fork(tenant, conversation, history):
    first = branches.create_branch(conversation, history[3].id)
    own = say(tenant, first, "f-u", "f-a")
    second = branches.create_branch(first, own[0].id)
    say(tenant, second, "s-a")
    assert contents(message_reads.get_history(tenant, second.session_id)) == [
        "u0", "a1", "u2", "a3", "f-u", "s-a"
    ]  # fmt: skip
    assert forks.ancestors_of(tenant, second.session_id) == [
        (conversation.session_id, history[3].ts), (first.session_id, own[0].ts)
    ]  # fmt: skip
    # a branch at a message the first branch shares reads the root only
    third = branches.create_branch(first, history[1].id)
    assert contents(message_reads.get_history(tenant, third.session_id)) == ["u0", "a1"]
    assert forks.ancestors_of(tenant, third.session_id) == [
        (conversation.session_id, history[1].ts)
    ]
    assert third.parent_id == first.pk and third.fork_message_id == history[1].id


def test_a_session_that_is_no_fork_reads_as_before(tenant, conversation, history):
    assert forks.ancestors_of(tenant, conversation.session_id) == []
    rows = message_reads.get_history(tenant, conversation.session_id, 4)
    lines = message_reads.get_history_lines(tenant, conversation.session_id, 4)
    assert [line[0] for line in lines] == [m.id for m in rows] == [m.id for m in history[2:]]
    assert message_reads.count_chat_messages(tenant, conversation.session_id) == 6


def test_compact_reads_a_branch_s_shared_history(tenant, conversation, history):
    from roleplay.compact import selectors as compact_reads

    branch = branches.create_branch(conversation, history[3].id)
    own = say(tenant, branch, "b-u", "b-a")
    chat = compact_reads.stored_chat(branch)
    assert [m.content for m in chat] == ["u0", "a1", "u2", "a3", "b-u", "b-a"]
    assert own[-1].ts > history[3].ts  # a branch's own messages come later in ts
