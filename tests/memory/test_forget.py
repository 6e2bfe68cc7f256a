"""Forgetting and what survives it, against the real database: evidence follows its message
(a rollback marks the entry ``source_missing``), the owner counters move (epoch on a
person's change or a forgetting), the store's signals go out after commit, and the
orchestrator clears a conversation, a player or a tenant and says what each part removed."""

from __future__ import annotations

import pytest
from django.db import transaction

from console.models import Player
from memory import owners
from memory import services as store
from memory.documents.services import put_document
from memory.entries import evidence
from memory.entries import services as entries
from memory.errors import MemoryInvalid
from memory.forget import clear_all, counts, forget
from memory.models import MemoryDocument, MemoryEntry, MemoryEvidence, Message
from memory.selectors import get_metadata
from memory.signals import history_changed, messages_deleted

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def owner(tenant):
    return Player.objects.create(tenant=tenant, external_id="owner")


def _learned(tenant, player, session="s1", text="Please be brief from now on."):
    message = store.save_message(tenant, session, role="user", content=text)
    entry = entries.add_entry(
        tenant, player, kind="preference", scope="persona", content="Keep replies brief.",
        category_key="length", character_id="c1", origin="rule",
    )  # fmt: skip
    evidence.attach(tenant, entry, message, 7, 16)
    return entry, message


def test_evidence_quotes_the_span_scrubbed_and_only_user_words_feed_preferences(tenant, owner):
    entry, message = _learned(tenant, owner, text="mail me at ann@example.com, be brief")
    quote = evidence.attach(tenant, entry, message, 11, 26).quote
    assert "ann@example.com" not in quote and "[redacted:" in quote
    reply = store.save_message(tenant, "s1", role="assistant", content="I will be brief.")
    with pytest.raises(MemoryInvalid) as refused:
        evidence.attach(tenant, entry, reply, 0, 4)
    assert refused.value.code == "evidence_not_user"
    for start, end in ((5, 5), (-1, 3), (0, 10_000)):
        with pytest.raises(MemoryInvalid):
            evidence.attach(tenant, entry, message, start, end)
    assert MemoryEvidence.objects.filter(entry=entry).count() == 2


def test_a_rollback_takes_the_evidence_and_marks_the_entry_source_missing(tenant, owner):
    entry, message = _learned(tenant, owner)
    kept, _ = _learned(tenant, owner, session="s2")
    assert store.delete_messages_by_timestamps(tenant, "s1", [message.ts]) == 1
    assert not MemoryEvidence.objects.filter(entry=entry).exists()
    assert MemoryEntry.objects.get(pk=entry.pk).source_missing is True
    assert MemoryEntry.objects.get(pk=kept.pk).source_missing is False


def test_the_store_signals_after_commit(tenant, owner):
    seen = []

    def record(signal):
        return lambda sender, **kw: seen.append((signal, kw["session_id"], kw.get("timestamps")))

    deleted, changed = record("deleted"), record("changed")
    messages_deleted.connect(deleted)
    history_changed.connect(changed)
    try:
        first = store.save_message(tenant, "s1", role="user", content="a")
        store.save_message(tenant, "s1", role="user", content="b")
        store.delete_messages_by_timestamps(tenant, "s1", [first.ts])
        assert seen == [("deleted", "s1", [first.ts]), ("changed", "s1", None)]
        seen.clear()
        store.trim_history(tenant, "s1", 0)
        assert seen == [("changed", "s1", None)]
        seen.clear()
        store.delete_messages_by_timestamps(tenant, "s1", [first.ts])  # nothing left to delete
        assert seen == []
    finally:
        messages_deleted.disconnect(deleted)
        history_changed.disconnect(changed)


def test_counters_move_with_every_change_and_the_epoch_with_a_persons(tenant, owner):
    assert owners.state(tenant, owner.pk) == (0, 0)
    entry, _ = _learned(tenant, owner)
    assert owners.state(tenant, owner.pk) == (1, 0)
    entry = entries.set_pinned(tenant, entry, entry.version, True)
    assert owners.state(tenant, owner.pk) == (2, 0)
    entry = entries.update_entry(tenant, entry, entry.version, content="Be brief.")
    assert owners.state(tenant, owner.pk) == (3, 1)
    with transaction.atomic():  # as a background job checks before it writes
        assert owners.epoch_is(tenant, owner.pk, 1) and not owners.epoch_is(tenant, owner.pk, 0)
    entries.delete_entry(tenant, entry, entry.version)
    assert owners.state(tenant, owner.pk) == (4, 2)


def test_forgetting_a_player_keeps_the_transcript_and_other_players(tenant, owner):
    other = Player.objects.create(tenant=tenant, external_id="other")
    _learned(tenant, owner, session="s1")
    theirs, _ = _learned(tenant, other, session="s9")
    put_document(tenant, "s1", "default", 0, {"scene": "gate"}, origin="api")
    put_document(tenant, "s9", "default", 0, {"scene": "inn"}, origin="api")
    epoch = owners.state(tenant, owner.pk)[1]

    results = forget(tenant, scope="player", player=owner, player_sessions=["s1"])
    assert counts(results) == {
        "entries": 1,
        "evidence": 1,
        "handoffs": 0,
        "documents": 1,
        "proposals": 0,
    }
    assert not MemoryEntry.objects.filter(player=owner).exists()
    assert Message.objects.filter(session_id="s1").count() == 1  # the conversation stays
    assert owners.state(tenant, owner.pk)[1] == epoch + 1
    assert MemoryEntry.objects.filter(pk=theirs.pk).exists()
    assert MemoryDocument.objects.filter(session_id="s9").exists()


def test_forgetting_a_session_and_clearing_the_tenant(tenant, other_tenant, owner):
    _learned(tenant, owner, session="s1")
    session_entry = entries.add_entry(
        tenant, owner, kind="context", scope="session", content="We are at the gate.",
        session_id="s1",
    )  # fmt: skip
    _learned(tenant, owner, session="s2")
    put_document(tenant, "s1", "default", 0, {"scene": "gate"}, origin="api")
    foreign = store.save_message(other_tenant, "s1", role="user", content="untouched")

    results = forget(tenant, scope="session", session_id="s1")
    by_part = {result["subsystem"]: result for result in results}
    assert by_part["messages"]["messages"] == 1
    assert by_part["memory"]["entries"] == 1 and by_part["memory"]["documents"] == 1
    assert not MemoryEntry.objects.filter(pk=session_entry.pk).exists()
    assert MemoryEntry.objects.filter(player=owner).count() == 2  # persona entries stay
    store.save_metadata(tenant, "summary", "s2", {"text": "so far"})

    total = counts(clear_all(tenant))
    assert total["messages"] == 1 and total["entries"] == 2
    assert not Message.objects.filter(tenant=tenant).exists()
    assert get_metadata(tenant, "summary", "s2") is None
    assert Message.objects.filter(pk=foreign.pk).exists()


def test_forget_refuses_a_scope_without_its_subject(tenant, owner):
    for kwargs in ({"scope": "session"}, {"scope": "player"}, {"scope": "everything"}):
        with pytest.raises(ValueError):
            forget(tenant, **kwargs)
