"""A turn that the abandoned-turn sweep closed while it still streamed (its process looked
dead) ends with ``error`` ``turn_abandoned`` on the sockets, not ``turn.completed``: the
stored reply is the text the sweep kept, and the late end writes nothing."""

from __future__ import annotations

import pytest

from memory.models import Message
from roleplay.models import Turn, TurnStatus
from roleplay.turns import Phase
from tests.turns.test_phases import registered, turn

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def test_a_turn_closed_by_the_sweep_meanwhile_ends_with_turn_abandoned(conversation, llm):
    async def swept(ctx, run):  # what the sweep does to a turn whose process went silent
        await Turn.objects.filter(pk=ctx.turn.pk).aupdate(
            status=TurnStatus.FAILED, error_code="turn_abandoned"
        )

    with registered(Phase(name="swept", run=swept)):
        events = await turn(conversation)
    kinds = [e["type"] for e in events]
    assert "turn.completed" not in kinds
    assert events[-1]["type"] == "error" and events[-1]["code"] == "turn_abandoned"
    stored = await Turn.objects.aget(pk=events[0]["turn_id"])
    assert (stored.status, stored.error_code) == (TurnStatus.FAILED, "turn_abandoned")
    assert not await Message.objects.filter(pk=stored.assistant_message_id).aexists()
