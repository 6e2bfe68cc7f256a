"""Agent V2's outbox: a turn records its planning run with its reply and sends no task; the
relay sends it once the turn has committed, never twice, and a dispatch that was lost (a
relay that stopped, a task the broker lost) is picked up."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, transaction
from django.utils import timezone

from console.celery import app
from memory import services as message_store
from roleplay.agentic.engine.inputs import Sheet
from roleplay.agentic.engine.runner import Inputs
from roleplay.agentic.relay import Relay
from roleplay.agentic.services import planning
from roleplay.models import PlanningRun, Turn
from roleplay.scenarios.selectors import agentic_config
from tests.agentic.test_background_run import say, until
from tests.agentic.world import make_world, scripted_world
from tests.background.processes import route_task, start_worker
from tests.ws.test_chat_socket import connect

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting(queue: str) -> int:
    with app.connection_for_write() as broker:
        return broker.default_channel.client.llen(queue)


@pytest.fixture
def outbox_queue():
    """``run_planning`` routed to a queue of this test's that nobody reads."""
    queue = f"outbox-{os.getpid()}"
    route_task("roleplay.run_planning", queue)
    try:
        yield queue
    finally:
        route_task("roleplay.run_planning", None)
        with app.connection_for_write() as broker:
            broker.default_channel.client.delete(queue)


def _in_another_connection(fn):
    def call():
        try:
            return fn()
        finally:
            connection.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result()


def _record(tenant, player, character, llm):
    """A turn of an Agent V2 world and :func:`planning.start` ready to record its run."""
    scenario, _configs, conversation = make_world(tenant, player, character, llm)
    session = conversation.session_id
    user = message_store.save_message(tenant, session, role="user", content="Hi")
    reply = message_store.save_message(tenant, session, role="assistant", content="")
    turn = Turn.objects.create(
        tenant=tenant, conversation=conversation, client_message_id="o1",
        user_message_id=user.pk, assistant_message_id=reply.pk, status="complete",
    )  # fmt: skip
    given = Inputs(
        turn=1, revision=0, state=None, entries=[], sheet=Sheet(name="Mira"),
        persona_name="Ann", persona_description="", history=[], query="Hi", first_turn=True,
    )  # fmt: skip
    return lambda: planning.start(turn, scenario, agentic_config(scenario), given, head=0)


@pytest.mark.asyncio
async def test_a_turn_records_its_run_and_sends_no_task_the_relay_sends_it_once(
    tenant, player, character, llm, outbox_queue
):
    _scenario, conversation, _router = await scripted_world(tenant, player, character, llm)
    comm = await connect(conversation)
    await say(comm, "Hello.", "x1")
    events = await until(comm, "turn.completed")
    await comm.disconnect()
    run = await PlanningRun.objects.aget(turn_id=events[-1]["turn_id"])
    assert (run.status, run.dispatched_at) == ("queued", None)  # recorded with the reply
    assert _waiting(outbox_queue) == 0  # the turn sent nothing
    assert await sync_to_async(planning.dispatch_pending)() == 1
    assert _waiting(outbox_queue) == 1
    run = await PlanningRun.objects.aget(pk=run.pk)
    assert run.dispatched_at is not None
    assert await sync_to_async(planning.dispatch_pending)() == 0  # never sent twice
    assert _waiting(outbox_queue) == 1


def test_the_relay_sees_a_run_only_once_the_turn_has_committed(
    tenant, player, character, llm, outbox_queue
):
    record = _record(tenant, player, character, llm)
    with transaction.atomic():
        assert record() is not None
        assert _in_another_connection(planning.dispatch_pending) == 0  # not committed yet
    assert _waiting(outbox_queue) == 0
    assert _in_another_connection(planning.dispatch_pending) == 1
    assert _waiting(outbox_queue) == 1


def test_a_run_recorded_while_no_relay_ran_is_sent_when_one_starts(
    tenant, player, character, llm, outbox_queue
):
    record = _record(tenant, player, character, llm)
    run = record()
    relay = Relay(poll_s=0.2).start()
    try:
        for _ in range(100):
            if _waiting(outbox_queue):
                break
            asyncio.run(asyncio.sleep(0.05))
    finally:
        relay.stop()
    assert _waiting(outbox_queue) == 1
    run.refresh_from_db()
    assert run.dispatched_at is not None


def test_a_run_marked_sent_whose_task_never_went_out_is_sent_again(
    tenant, player, character, llm, outbox_queue
):
    """A relay killed between marking the run and sending its task (or a broker that lost
    it): the run stays queued, and the minute's sweep sends it again once it is stale."""
    run = _record(tenant, player, character, llm)()
    PlanningRun.objects.filter(pk=run.pk).update(dispatched_at=timezone.now())
    assert planning.dispatch_pending() == 0  # marked: the relay leaves it
    assert planning.requeue_stalled() == {"requeued": 0, "abandoned": 0}  # not stale yet
    stale = timezone.now() - planning.STALLED_QUEUED - timedelta(seconds=1)
    PlanningRun.objects.filter(pk=run.pk).update(dispatched_at=stale)
    assert planning.requeue_stalled() == {"requeued": 1, "abandoned": 0}
    assert _waiting(outbox_queue) == 1
    run.refresh_from_db()
    assert run.dispatched_at > stale  # and not again at the next sweep
    assert planning.requeue_stalled() == {"requeued": 0, "abandoned": 0}


@pytest.mark.asyncio
async def test_a_worker_started_by_its_entry_point_relays_and_runs_the_turns_run(
    tenant, player, character, llm, tmp_path
):
    """``celery -A console.worker worker`` with the relay on: the turn's run is sent and
    executed with nothing else doing it."""
    _scenario, conversation, _router = await scripted_world(tenant, player, character, llm)
    queue = f"relay-{os.getpid()}"
    worker = await sync_to_async(start_worker)(tmp_path, queue=queue, env={"PLANNING_RELAY": "1"})
    try:
        comm = await connect(conversation)
        await say(comm, "I promise to bring the key back by dawn.", "w1")
        done = (await until(comm, "planning.completed", timeout=60))[-1]
        await comm.disconnect()
    finally:
        await sync_to_async(worker.stop)()
    assert done["outcome"] == "updated"
    run = await PlanningRun.objects.aget(turn_id=done["turn_id"])
    assert run.dispatched_at is not None and run.deliveries == 1
