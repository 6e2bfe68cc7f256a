"""When a turn records its Agent V2 background run (seed 002 line 41): every turn that
entered the Actor has one, even if the Actor then failed; a turn that failed before the
Actor (a required pre-Actor phase, a prompt over its window) has none."""

from __future__ import annotations

import pytest

from console.failures import Invalid
from roleplay.llm.scripted_server import Reply
from roleplay.models import PlanningRun, Turn
from roleplay.turns import Phase
from tests.agentic.test_background_run import say, until
from tests.agentic.world import happy_router, scripted_world
from tests.turns.test_phases import registered
from tests.ws.test_chat_socket import connect

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def test_a_turn_failing_in_a_required_pre_actor_phase_starts_no_background_run(
    tenant, player, character, llm
):
    _scenario, conversation, router = await scripted_world(tenant, player, character, llm)

    async def broken(ctx, run):
        raise Invalid("state_unreadable", "no")

    with registered(Phase(name="state", run=broken, required=True)):
        comm = await connect(conversation)
        await say(comm, "Hello.", "f1")
        events = await until(comm, "error")
        await comm.disconnect()
    assert events[-1]["code"] == "state_unreadable"
    assert "actor" not in router.seen  # the Actor never ran
    turn = await Turn.objects.aget(pk=events[0]["turn_id"])
    assert turn.status == "failed"
    assert not await PlanningRun.objects.filter(turn=turn).aexists()


async def test_a_turn_whose_actor_failed_still_records_its_background_run(
    tenant, player, character, llm
):
    router = happy_router()
    router.answers["actor"] = Reply(status=400, error_body={"error": {"message": "refused"}})
    _scenario, conversation, router = await scripted_world(tenant, player, character, llm, router)
    comm = await connect(conversation)
    await say(comm, "Hello.", "f2")
    events = await until(comm, "error")
    await comm.disconnect()
    turn = await Turn.objects.aget(pk=events[0]["turn_id"])
    assert turn.status == "failed" and "actor" in router.seen
    assert await PlanningRun.objects.filter(turn=turn).aexists()


@pytest.mark.parametrize("tolerate", [False, True])
async def test_tolerate_missing_stream_metadata_lets_a_stream_without_finish_reason_complete(
    tenant, player, character, llm, tolerate
):
    """``recovery.tolerateMissingStreamMetadata`` (seed 002 line 147), only when ``true``:
    the Actor's stream that ends ([DONE]) without a ``finish_reason`` is taken as finished;
    without it, such a stream is a bad response."""
    router = happy_router()
    router.answers["actor"] = Reply(content="The keeper nods.", chunks=2, finish_reason=None)
    extra = {"recovery": {"tolerateMissingStreamMetadata": True}} if tolerate else {}
    _scenario, conversation, router = await scripted_world(
        tenant, player, character, llm, router, **extra
    )
    comm = await connect(conversation)
    await say(comm, "Hello.", f"m{tolerate}")
    events = await until(comm, "turn.completed" if tolerate else "error")
    await comm.disconnect()
    if tolerate:
        assert events[-1]["content"] == "The keeper nods."
    else:
        assert events[-1]["code"] == "model_bad_response"
