"""The work beside the Actor: all of it runs once, in one database call, and one piece's
failure neither stops the rest nor reaches the turn."""

from __future__ import annotations

import logging
import threading

import pytest

from roleplay.turns.run import _Beside


@pytest.mark.asyncio
async def test_every_piece_runs_once_on_one_thread_and_a_failure_is_logged(caplog):
    ran: list[tuple[str, int]] = []

    def failing() -> None:
        ran.append(("failing", threading.get_ident()))
        raise RuntimeError("boom")

    def recording() -> None:
        ran.append(("recording", threading.get_ident()))

    beside = _Beside("turn-1")
    beside.work = [failing, recording]
    with caplog.at_level(logging.ERROR, logger="roleplay.turns.run"):
        beside.start()
        beside.start()  # the first delta and the turn's end both start it: once
        await beside.finish()
    assert [name for name, _ in ran] == ["failing", "recording"]
    assert len({thread for _, thread in ran}) == 1
    assert threading.get_ident() not in {thread for _, thread in ran}
    assert "work beside turn turn-1 failed" in caplog.text


@pytest.mark.asyncio
async def test_a_turn_with_nothing_beside_it_finishes():
    beside = _Beside("turn-2")
    await beside.finish()
    assert beside.running is None
