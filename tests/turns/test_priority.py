"""New turns before old streams: the gate streams wait at while a turn is starting."""

from __future__ import annotations

import asyncio
import random

import pytest

from roleplay.bench.players import Pacing
from roleplay.turns.priority import StartsFirst

pytestmark = pytest.mark.asyncio


async def test_free_when_no_turn_is_starting():
    gate = StartsFirst(max_defer=10)
    await asyncio.wait_for(gate.yield_to_starts(), 1)


async def test_streams_wait_until_the_last_start_ends():
    gate = StartsFirst(max_defer=10)
    gate.begin()
    gate.begin()
    waiting = asyncio.ensure_future(gate.yield_to_starts())
    await asyncio.sleep(0.02)
    assert not waiting.done()
    gate.end()
    await asyncio.sleep(0.02)
    assert not waiting.done()  # one turn is still starting
    gate.end()
    await asyncio.wait_for(waiting, 1)
    assert gate.starting == 0


async def test_a_stream_is_slowed_never_starved():
    gate = StartsFirst(max_defer=0.05)
    gate.begin()  # a start that never ends
    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.wait_for(gate.yield_to_starts(), 1)
    assert loop.time() - started >= 0.04
    assert not gate._waiters  # nothing left behind


async def test_end_never_goes_below_zero():
    gate = StartsFirst()
    gate.end()
    assert gate.starting == 0
    await asyncio.wait_for(gate.yield_to_starts(), 1)


async def test_pacing_spreads_first_messages_and_thinks_between_turns(monkeypatch):
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    pacing = Pacing(think_s=2.0, seed=7)
    rng = pacing.rng(3)
    for turn in range(4):
        await pacing.think(rng, turn)
    assert 0 <= slept[0] <= 2.0
    assert all(1.0 <= s <= 3.0 for s in slept[1:])
    # Reproducible per seed and player, different between players.
    again: list[float] = []
    slept, first = again, slept
    rng = pacing.rng(3)
    for turn in range(4):
        await pacing.think(rng, turn)
    assert again == first
    assert pacing.rng(4).random() != random.Random(7 * 1_000_003 + 3).random()
    await Pacing().think(pacing.rng(0), 1)  # no think time: no sleep at all
    assert len(again) == 4
