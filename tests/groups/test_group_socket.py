"""A three-character group over the chat socket, against the scripted model: the speaker
named in ``turn.started``, force-talk (frame and ``/trigger``), and auto-mode replies one
after another, stopped by a player's message or a cancel."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async

from memory.models import Message
from roleplay.models import Conversation, Turn
from tests.ws.test_chat_socket import connect
from tests.ws.test_rewrites import send, until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@sync_to_async
def configure(conversation, **fields):
    Conversation.objects.filter(pk=conversation.pk).update(**fields)


@sync_to_async
def spoken(conversation) -> list[tuple[str, str]]:
    rows = Message.objects.filter(session_id=conversation.session_id).order_by("ts")
    return [(m.role, m.metadata.get("speaker", {}).get("name", "player")) for m in rows]


async def completions(comm, count: int) -> list[dict]:
    """The events up to the ``count``-th ``turn.completed``."""
    events: list[dict] = []
    done = 0
    while done < count:
        batch = await until(comm, "turn.completed")
        events += batch
        assert batch[-1]["type"] == "turn.completed", batch[-1]
        done += 1
    return events


async def test_auto_mode_lets_the_group_answer_itself(group, llm):
    await configure(group, group_mode="list", auto_turns=2, auto_delay_ms=10)
    comm = await connect(group)
    await send(comm, type="user_message", client_message_id="c1", content="Hello, all.")
    events = await completions(comm, 3)
    started = [e for e in events if e["type"] == "turn.started"]
    assert [e["speaker"]["name"] for e in started] == ["Mira", "Jon", "Ada"]
    assert [e["kind"] for e in started] == ["chat", "group", "group"]
    assert started[1].get("auto") is True
    assert await spoken(group) == [("user", "player"), ("assistant", "Mira"),
                                   ("assistant", "Jon"), ("assistant", "Ada")]  # fmt: skip
    await asyncio.sleep(0.2)  # the chain is over: no fourth reply
    assert await sync_to_async(Turn.objects.count)() == 3
    await comm.disconnect()


async def test_a_player_message_stops_auto_mode(group, llm):
    await configure(group, group_mode="list", auto_turns=1, auto_delay_ms=400)
    comm = await connect(group)
    await send(comm, type="user_message", client_message_id="c1", content="Hello.")
    await completions(comm, 1)  # Mira answered; Jon waits out the delay
    await send(comm, type="user_message", client_message_id="c2", content="Only Ada.",
               speaker="Ada")  # fmt: skip
    events = await completions(comm, 2)  # Ada, then the new chain's one reply
    started = [e for e in events if e["type"] == "turn.started"]
    assert [(e["kind"], e["speaker"]["name"]) for e in started] == [
        ("chat", "Ada"), ("group", "Mira")]  # fmt: skip
    assert await spoken(group) == [("user", "player"), ("assistant", "Mira"), ("user", "player"),
                                   ("assistant", "Ada"), ("assistant", "Mira")]  # fmt: skip
    await comm.disconnect()


async def test_cancel_stops_the_chain(group, llm):
    await configure(group, group_mode="list", auto_turns=3, auto_delay_ms=300)
    comm = await connect(group)
    await send(comm, type="user_message", client_message_id="c1", content="Hello.")
    await completions(comm, 1)
    await send(comm, type="cancel")
    await asyncio.sleep(0.6)
    assert await sync_to_async(Turn.objects.count)() == 1
    await comm.disconnect()


async def test_force_talk_by_frame_and_by_command(group, llm):
    comm = await connect(group)
    await send(comm, type="group.trigger", character="Jon")
    [*_, done] = await completions(comm, 1)
    assert done["type"] == "turn.completed"
    await send(comm, type="user_message", client_message_id="t2", content="/trigger ada")
    events = await completions(comm, 1)
    assert events[0]["speaker"]["name"] == "Ada" and events[0]["kind"] == "group"
    assert await spoken(group) == [("assistant", "Jon"), ("assistant", "Ada")]  # no message
    await send(comm, type="group.trigger", character="Nobody")
    [error] = await until(comm, "turn.started")
    assert error["code"] == "member_not_found"
    await send(comm, type="group.trigger", character=5)
    [error] = await until(comm, "turn.started")
    assert error["code"] == "invalid_message"
    await comm.disconnect()


async def test_a_manual_group_waits_for_the_players_pick(group, llm):
    await configure(group, group_mode="manual", auto_turns=3)
    comm = await connect(group)
    await send(comm, type="user_message", client_message_id="c1", content="Hi")
    [error] = await until(comm, "turn.started")
    assert error["code"] == "speaker_required"
    await send(comm, type="user_message", client_message_id="c2", content="Hi", speaker="Ada")
    events = await completions(comm, 1)
    assert events[0]["speaker"]["name"] == "Ada"
    await asyncio.sleep(0.2)  # no auto-mode in a manual group
    assert await spoken(group) == [("user", "player"), ("assistant", "Ada")]
    await comm.disconnect()
