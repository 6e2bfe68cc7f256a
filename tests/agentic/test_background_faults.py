"""Agent V2's background run when things go wrong or slow, end to end over the socket with
a real Celery worker: a slow orchestrator never holds up a reply or the next turn, a failing
specialist, a Director that keeps writing invalid states, a state that moved before the
commit, a task delivered twice, and a worker killed in the middle of a run."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from roleplay.agentic.services import agent_state
from roleplay.llm.scripted_server import Reply
from roleplay.models import AgentStateRevision, ModelCall, PlanningRun
from roleplay.tasks import run_planning
from tests.agentic.test_background_run import say, until
from tests.agentic.world import happy_router, phase, scripted_world, state_text
from tests.background.processes import route_task, start_worker
from tests.ws.test_chat_socket import connect

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def _revisions(conversation):
    return AgentStateRevision.objects.filter(conversation=conversation).count()


async def test_a_slow_background_holds_up_neither_the_reply_nor_the_next_turn(
    planning_relay, tenant, player, character, llm
):
    router = happy_router()
    slow = router.answers["orchestrator"]
    router.answers["orchestrator"] = lambda r: Reply(
        tool_calls=slow(r).tool_calls, finish_reason="tool_calls", delay=3.0
    )
    _scenario, conversation, router = await scripted_world(tenant, player, character, llm, router)
    comm = await connect(conversation)
    await say(comm, "First.", "s1")
    first = await until(comm, "turn.completed")
    await say(comm, "Second, right away.", "s2")
    events = await until(comm, "turn.completed")
    assert "planning.completed" not in [e["type"] for e in first]
    second_turn = events[-1]["turn_id"]
    done = [e for e in events if e["type"] == "planning.completed"]
    assert all(e["turn_id"] != second_turn for e in done)  # the second reply came first
    planned = {e["turn_id"] for e in done}
    while len(planned) < 2:
        last = (await until(comm, "planning.completed", timeout=60))[-1]
        planned.add(last["turn_id"])
    runs = [r async for r in PlanningRun.objects.filter(conversation=conversation)]
    assert len(runs) == 2 and all(r.status == "done" for r in runs)
    # the second turn's background read the turn-start state: nothing committed yet then
    assert {r.snapshot["revision"] for r in runs} == {0}
    await comm.disconnect()


async def test_a_failing_specialist_yields_a_failure_result(
    planning_relay, tenant, player, character, llm
):
    router = happy_router()
    router.answers["specialist"] = lambda r: (
        Reply(status=400, error_body={"error": {"message": "bad request"}})
        if "open threads" in r["messages"][0]["content"]
        else Reply(content="Present: only Mira.")
    )
    _scenario, conversation, router = await scripted_world(tenant, player, character, llm, router)
    comm = await connect(conversation)
    await say(comm, "I promise to return the key.", "f1")
    done = (await until(comm, "planning.completed"))[-1]
    assert done["outcome"] == "updated"
    run = await PlanningRun.objects.aget(turn_id=done["turn_id"])
    by_tool = {s["tool"]: s for s in run.specialists}
    assert by_tool["manage_callbacks"]["status"] == "failed"
    assert by_tool["judge_npc"]["status"] == "ok"
    phase2 = [r for r in router.seen["orchestrator"] if phase(r) == 2][-1]
    tool_texts = [m["content"] for m in phase2["messages"] if m["role"] == "tool"]
    assert any(t.startswith("failed:") for t in tool_texts)
    assert "Present: only Mira." in tool_texts
    keys = await sync_to_async(
        lambda: list(agent_state.read_state(conversation, run.scenario).ledger)
    )()
    assert {e["key"].split(":")[0] for e in keys} == {"judge_npc", "direct_scene"}
    await comm.disconnect()


async def test_a_director_invalid_three_times_keeps_the_old_state(
    planning_relay, tenant, player, character, llm
):
    router = happy_router()
    router.answers["director"] = Reply(content="<think>hmm</think> too short")
    _scenario, conversation, router = await scripted_world(tenant, player, character, llm, router)
    comm = await connect(conversation)
    await say(comm, "Hello.", "d1")
    done = (await until(comm, "planning.completed"))[-1]
    assert done["outcome"] == "invalid_candidate" and done["revision"] == 0
    run = await PlanningRun.objects.aget(turn_id=done["turn_id"])
    assert [a["verdict"] for a in run.director["attempts"]] == ["too_short"] * 3
    assert len(router.seen["director"]) == 3
    assert await sync_to_async(_revisions)(conversation) == 0
    calls = ModelCall.objects.filter(turn_id=run.turn_id, purpose="director")
    assert await calls.acount() == 3
    await comm.disconnect()


async def test_a_state_that_moved_before_the_commit_is_a_stale_write(
    planning_relay, tenant, player, character, llm
):
    scenario, conversation, router = await scripted_world(tenant, player, character, llm)
    happy = router.answers["director"]

    def director(request):
        # an operator's write lands while the Director is thinking
        agent_state.commit(
            conversation, scenario, expected_head=0, state=state_text("operator"),
            tools_called=[], source_turn=0, source_message_id=None, origin="restore",
        )  # fmt: skip
        connection.close()
        return happy

    router.answers["director"] = director
    comm = await connect(conversation)
    await say(comm, "Hello.", "c1")
    done = (await until(comm, "planning.completed"))[-1]
    assert done["outcome"] == "stale_write_rejected"
    run = await PlanningRun.objects.aget(turn_id=done["turn_id"])
    assert run.error_code == "stale_write_rejected" and run.revision is None
    read = await sync_to_async(agent_state.read_state)(conversation, scenario)
    assert read.revision == 1 and "operator notes." in read.state
    await comm.disconnect()


async def test_a_task_delivered_twice_commits_once(planning_relay, tenant, player, character, llm):
    _scenario, conversation, _router = await scripted_world(tenant, player, character, llm)
    comm = await connect(conversation)
    await say(comm, "Hello.", "t1")
    done = (await until(comm, "planning.completed"))[-1]
    run = await PlanningRun.objects.aget(turn_id=done["turn_id"])
    again = await sync_to_async(
        lambda: run_planning.apply_async((str(run.pk),), ignore_result=False).get(timeout=60)
    )()
    assert again == "skipped"
    run = await PlanningRun.objects.aget(pk=run.pk)
    assert run.deliveries == 1 and run.revision == 1
    assert await sync_to_async(_revisions)(conversation) == 1
    await comm.disconnect()


async def test_a_worker_killed_mid_run_is_redelivered_and_finishes_once(
    planning_relay, tenant, player, character, llm, tmp_path
):
    router = happy_router()
    first_call = asyncio.Event()
    loop = asyncio.get_running_loop()
    calls = {"n": 0}
    selection = router.answers["orchestrator"]

    def orchestrator(request):
        calls["n"] += 1
        if calls["n"] == 1:  # the first delivery hangs here until its worker dies
            loop.call_soon_threadsafe(first_call.set)
            return Reply(hang=True)
        return selection(request)

    router.answers["orchestrator"] = orchestrator
    _scenario, conversation, router = await scripted_world(tenant, player, character, llm, router)
    queue = f"killed-{os.getpid()}"
    env = {"CELERY_VISIBILITY_TIMEOUT": "2"}
    doomed = await sync_to_async(start_worker)(tmp_path, queue=queue, env=env)
    route_task("roleplay.run_planning", queue)
    try:
        comm = await connect(conversation)
        await say(comm, "Hello.", "k1")
        await until(comm, "turn.completed")
        await asyncio.wait_for(first_call.wait(), 30)
        os.kill(doomed.process.pid, signal.SIGKILL)
        doomed.process.wait(10)
        again = await sync_to_async(start_worker)(tmp_path, queue=queue, env=env)
        try:
            done = (await until(comm, "planning.completed", timeout=90))[-1]
        finally:
            await sync_to_async(again.stop)()
    finally:
        route_task("roleplay.run_planning", None)
    assert done["outcome"] == "updated" and done["revision"] == 1
    run = await PlanningRun.objects.aget(turn_id=done["turn_id"])
    assert run.deliveries == 2 and run.status == "done"
    assert await sync_to_async(_revisions)(conversation) == 1
    await comm.disconnect()


async def test_reply_completed_policy_commits_nothing_for_a_failed_reply(
    planning_relay, tenant, player, character, llm
):
    router = happy_router()
    router.answers["actor"] = Reply(status=400, error_body={"error": {"message": "refused"}})
    _scenario, conversation, router = await scripted_world(
        tenant, player, character, llm, router, commitPolicy="reply_completed"
    )
    comm = await connect(conversation)
    await say(comm, "Hello.", "p1")
    done = (await until(comm, "planning.completed"))[-1]
    assert done["outcome"] == "unchanged" and done["revision"] == 0
    run = await PlanningRun.objects.aget(turn_id=done["turn_id"])
    assert run.error_code == "reply_not_completed"
    assert await sync_to_async(_revisions)(conversation) == 0
    await comm.disconnect()


async def test_the_background_deadline_is_enforced():
    """``backgroundDeadlineMs`` (at least 10 s) ends a run whose models never answer."""
    from roleplay.agentic.engine.inputs import Sheet
    from roleplay.agentic.engine.runner import Inputs
    from roleplay.agentic.services.planning import _run
    from roleplay.scenarios.config import AgenticV2

    class Silent:
        def system(self, role, variables):
            return role

        async def complete(self, role, request):
            await asyncio.sleep(3600)

    config = AgenticV2.model_validate(
        {"modelConfigs": {"actor": "a", "orchestrator": "o"}, "enabledTools": ["judge_npc"],
         "backgroundDeadlineMs": 10000},
        strict=False,
    )  # fmt: skip
    given = Inputs(
        turn=2, revision=0, state=None, entries=[], sheet=Sheet(name="Mira"), persona_name="Ann",
        persona_description="", history=[], query="hi", first_turn=False,
    )  # fmt: skip
    result = await _run(config, given, Silent())
    assert (result.outcome, result.error_code) == ("failed", "background_deadline")


async def test_a_run_whose_task_was_lost_is_sent_again(
    planning_relay, tenant, player, character, llm
):
    """The broker lost the task (here: it went to a queue nobody reads); the minute's sweep
    sends it again and the run finishes; a run past its deliveries is given up."""
    from datetime import timedelta

    from django.utils import timezone

    from roleplay.agentic.services import planning

    _scenario, conversation, _router = await scripted_world(tenant, player, character, llm)
    route_task("roleplay.run_planning", f"lost-{os.getpid()}")
    try:
        comm = await connect(conversation)
        await say(comm, "Hello.", "l1")
        await until(comm, "turn.completed")
        await say(comm, "Again.", "l2")
        await until(comm, "turn.completed")
        for _ in range(200):  # the relay sent both tasks (into the lost queue)
            runs = PlanningRun.objects.filter(conversation=conversation)
            if await runs.filter(dispatched_at__isnull=False).acount() == 2:
                break
            await asyncio.sleep(0.05)
    finally:
        route_task("roleplay.run_planning", None)
    runs = [r async for r in PlanningRun.objects.filter(conversation=conversation)]
    assert [r.status for r in runs] == ["queued", "queued"]
    assert all(r.dispatched_at is not None for r in runs)
    old = timezone.now() - timedelta(minutes=5)
    await PlanningRun.objects.filter(pk=runs[0].pk).aupdate(created_at=old, dispatched_at=old)
    await PlanningRun.objects.filter(pk=runs[1].pk).aupdate(
        created_at=old, dispatched_at=old, deliveries=planning.MAX_DELIVERIES
    )
    assert await sync_to_async(planning.requeue_stalled)() == {"requeued": 1, "abandoned": 1}
    done = (await until(comm, "planning.completed"))[-1]
    assert done["turn_id"] == str(runs[0].turn_id)
    given_up = await PlanningRun.objects.aget(pk=runs[1].pk)
    assert (given_up.status, given_up.error_code) == ("done", "background_abandoned")
    await comm.disconnect()
