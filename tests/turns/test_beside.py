"""Work beside the Actor, gathered across turns (``roleplay.turns.beside``): what is ready
while turns are starting runs together in one database call once they have started, each
piece on its own, and each turn's call returns when its own pieces are done."""

from __future__ import annotations

import asyncio
import threading

import pytest

from roleplay.priority import STARTS
from roleplay.turns import beside

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def test_work_ready_while_turns_start_runs_in_one_call_after_them():
    ran: list[tuple[str, int]] = []

    def piece(name):
        return lambda: ran.append((name, threading.get_ident()))

    def broken():
        raise RuntimeError("a piece that fails")

    STARTS.begin()  # a turn is starting: the work waits for it
    try:
        first = asyncio.ensure_future(beside.run("turn-1", [piece("a1"), broken, piece("a2")]))
        second = asyncio.ensure_future(beside.run("turn-2", [piece("b1")]))
        await asyncio.sleep(0.01)
        assert not ran and not first.done()
    finally:
        STARTS.end()
    await asyncio.wait_for(asyncio.gather(first, second), 5)
    assert [name for name, _ in ran] == ["a1", "a2", "b1"]  # the failure did not stop them
    assert len({thread for _, thread in ran}) == 1  # one database call for both turns
    assert threading.get_ident() not in {thread for _, thread in ran}


async def test_with_no_turn_starting_work_runs_at_once_in_its_turns_context():
    from console.logging import turn_id_var

    ran: list[str | None] = []
    turn_id_var.set("turn-3")
    await asyncio.wait_for(beside.run("turn-3", [lambda: ran.append(turn_id_var.get())]), 5)
    assert ran == ["turn-3"]
