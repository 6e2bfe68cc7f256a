"""A turn's recall job waits in a Redis list beside its task (``memory.recall.pending``), so
a task indexes the turns waiting with its own in one batch: every waiting conversation's
messages indexed with their owners, the receivers told once per conversation, a job indexed
in another's batch a no-op for its own task, and bad or foreign entries harmless. Also:
Celery's Django fix-up keeps the worker's database connection between tasks."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from console.redis_sync import client
from memory import services as message_store
from memory.models import RecallItem
from memory.recall import indexing, pending
from memory.signals import messages_indexed
from memory.tasks import index_messages
from roleplay.models import Character, Conversation

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_list():
    client(pending.TIMEOUT_S).delete(pending._key())
    yield
    client(pending.TIMEOUT_S).delete(pending._key())


def _turn(tenant, player, character, words: str) -> list:
    """A conversation with one turn; its job as the turn's hook writes it."""
    conversation = Conversation.objects.create(tenant=tenant, player=player, character=character)
    ids = [
        str(message_store.save_message(tenant, conversation.session_id, role=r, content=t).pk)
        for r, t in (("user", f"Where is the {words}?"), ("assistant", f"The {words} is here."))
    ]
    return [str(tenant.pk), conversation.session_id, str(player.pk), str(character.pk),
            str(conversation.pk), ids]  # fmt: skip


def _wait(job: list) -> None:
    pipeline = client(pending.TIMEOUT_S).pipeline(transaction=False)
    pending.add(job, pipeline)
    pipeline.execute()


def _told() -> list:
    seen: list = []

    def receiver(sender, *, session_id, message_ids, **_):
        seen.append((session_id, list(message_ids)))

    messages_indexed.connect(receiver, weak=False, dispatch_uid="test.batching")
    return seen


def _indexed(job) -> set:
    rows = RecallItem.objects.filter(session_id=job[1], chunk=0)
    return {str(i) for i in rows.values_list("message_id", flat=True)}


def test_a_task_indexes_the_turns_waiting_beside_its_own(tenant, player, character):
    other = Character.objects.create(tenant=tenant, name="Juno")
    waiting = [_turn(tenant, player, c, w) for c, w in ((character, "key"), (other, "map"))]
    for job in waiting:
        _wait(job)
    own = _turn(tenant, player, character, "lamp")
    told = _told()
    try:
        assert index_messages.run(*own) == 2
        for job in (own, *waiting):
            assert _indexed(job) == set(job[5])
        rows = RecallItem.objects.filter(session_id=waiting[1][1])
        assert {str(r.character_id) for r in rows} == {str(other.pk)}  # each job's owner
        assert sorted(s for s, _ids in told) == sorted(j[1] for j in (own, *waiting))
        assert pending.take() == []  # the list was drained
        told.clear()
        assert index_messages.run(*waiting[0]) == 0  # its own task later: nothing to do
        assert told == []  # and the receivers are not told twice
    finally:
        messages_indexed.disconnect(dispatch_uid="test.batching")


def test_jobs_of_another_tenant_and_bad_entries_are_harmless(
    tenant, other_tenant, player, character
):
    from console.models import Player

    foreign_player = Player.objects.create(tenant=other_tenant, external_id="x", display_name="X")
    foreign_character = Character.objects.create(tenant=other_tenant, name="Vale")
    foreign = _turn(other_tenant, foreign_player, foreign_character, "coin")
    key = pending._key()
    malformed = [
        "not json", json.dumps({"a": 1}), json.dumps([1, 2]),
        json.dumps([*foreign[:5], ["not-a-uuid"]]), json.dumps(["x", *foreign[1:]]),
        json.dumps([*foreign[:4], None, foreign[5]]), json.dumps([*foreign[:5], "ids"]),
    ]  # fmt: skip
    client(pending.TIMEOUT_S).rpush(key, *malformed)
    _wait(foreign)
    # a job naming a message of another conversation (or tenant) indexes nothing of it
    own = _turn(tenant, player, character, "rope")
    forged = [*own[:5], [*own[5], *foreign[5]]]
    assert index_messages.run(*forged) == 2
    assert _indexed(own) == set(own[5])
    assert _indexed(foreign) == set(foreign[5])  # under its own tenant's owner
    assert set(RecallItem.objects.filter(session_id=foreign[1]).values_list(
        "tenant_id", flat=True)) == {other_tenant.pk}  # fmt: skip


def test_a_job_named_twice_is_indexed_once(tenant, player, character):
    job = _turn(tenant, player, character, "bell")
    done = indexing.index_jobs(
        tenant, [indexing.Job(*job[1:5], message_ids=job[5]) for _ in range(2)]
    )
    assert done == [2, 0]
    assert RecallItem.objects.filter(session_id=job[1]).count() == 2


def test_the_list_is_bounded_and_named_after_the_database(tenant, player, character):
    assert pending._key().endswith(connection.settings_dict["NAME"])
    job = _turn(tenant, player, character, "oar")
    client(pending.TIMEOUT_S).rpush(pending._key(), *[json.dumps(job)] * pending.MAX_WAITING)
    _wait(job)  # one more: the oldest goes
    assert client(pending.TIMEOUT_S).llen(pending._key()) == pending.MAX_WAITING
    assert len(pending.take(5)) == 5


def test_the_worker_keeps_its_connection_between_tasks():
    from celery.fixups.django import DjangoWorkerFixup

    from console.celery import app

    fixup = DjangoWorkerFixup(app)
    connection.ensure_connection()
    before = connection.connection
    for _ in range(10):  # before and after five tasks
        fixup.close_database()
    assert connection.connection is before


def test_the_turns_hook_queues_the_job_and_its_task_together(
    tenant, player, character, django_capture_on_commit_callbacks
):
    import uuid

    from console.celery import app
    from roleplay.turns.records import index_on_commit

    job = _turn(tenant, player, character, "sail")
    queue, previous = f"test-{uuid.uuid4().hex[:8]}", app.conf.task_default_queue
    app.conf.task_default_queue = queue
    try:
        with django_capture_on_commit_callbacks(execute=True):
            index_on_commit(job[4], job[5])
        (sent,) = client(pending.TIMEOUT_S).lrange(queue, 0, -1)
    finally:
        app.conf.task_default_queue = previous
        client(pending.TIMEOUT_S).delete(queue)
    assert json.loads(sent)["headers"]["task"] == "memory.index_messages"
    assert pending.take() == [job]  # waiting for whichever task comes first


def test_a_row_another_task_wrote_meanwhile_is_skipped_not_fatal(tenant, player, character):
    """Two tasks can index one job at once (one took it from the list while its own task
    ran): the second's rows for it are skipped, its other jobs' rows still go in, and only
    what went in is counted (so the receivers are told once)."""
    from memory.engine import recall as terms
    from memory.models import Message

    done, fresh = (_turn(tenant, player, character, w) for w in ("ladder", "kettle"))
    assert index_messages.run(*done) == 2  # the other task, first

    def items(job):
        owner = indexing.Job(*job[1:5], message_ids=job[5])
        return [
            (owner, m, 0, m.content, terms.tsvector_literal(m.content), None, "x")
            for m in Message.objects.filter(pk__in=job[5])
        ]

    inserted = indexing._insert(tenant, items(done) + items(fresh), "unavailable")
    assert {str(i) for i in inserted} == set(fresh[5])
    assert _indexed(done) == set(done[5]) and _indexed(fresh) == set(fresh[5])
    assert RecallItem.objects.filter(session_id=done[1]).count() == 2  # no second copy
