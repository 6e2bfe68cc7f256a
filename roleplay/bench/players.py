"""Concurrent clients for the turn benchmark: WebSocket players and the SDK-only baseline.

Each player runs its turns one after another over its own conversation; all players run at
once. A player may think between turns (``Pacing``): it waits a random time around
``think_s`` before each message, its first one included, so players do not all press
enter in the same millisecond. With ``think_s=0`` every player sends its next message the
moment the last reply ends, which measures throughput, not the latency a player sees.
Every user message carries a unique marker (``bench-<run>-p<i>-t<j>``) so a turn can be
matched with the scripted server's record of the model request it caused, whose
``first_chunk_ms`` (the server's own time to first chunk) is subtracted from the client's
time to first delta.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial

from roleplay.bench.stats import TurnSample
from roleplay.llm.scripted_server import RequestTiming

MARKER = re.compile(r"bench-[0-9a-f]+-p\d+-t\d+")


@dataclass(frozen=True)
class Pacing:
    """Think time before each message: uniform in [0.5, 1.5] x ``think_s`` (before the
    first message: uniform in [0, 1] x ``think_s``, spreading the players' starts)."""

    think_s: float = 0.0
    seed: int = 0

    def rng(self, player: int) -> random.Random:
        return random.Random(self.seed * 1_000_003 + player)

    async def think(self, rng: random.Random, turn: int) -> None:
        if self.think_s <= 0:
            return
        low, high = (0.0, 1.0) if turn == 0 else (0.5, 1.5)
        await asyncio.sleep(self.think_s * rng.uniform(low, high))


def marker(run_id: str, player: int, turn: int) -> str:
    return f"bench-{run_id}-p{player}-t{turn}"


def _elapsed_ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000.0


async def websocket_player(
    url: str,
    run_id: str,
    player: int,
    turns: int,
    samples: list[TurnSample],
    *,
    turn_timeout: float,
    pacing: Pacing = Pacing(),
) -> None:
    """One player on ``url`` (a ticketed socket URL): ``turns`` sequential turns, each
    appended to ``samples`` as it starts (so a cancelled run keeps what it measured)."""
    import websockets

    try:
        socket = await asyncio.wait_for(
            websockets.connect(url, max_size=2**22, open_timeout=turn_timeout), turn_timeout
        )
    except Exception as exc:  # every planned turn of this player is an error
        code = f"connect_failed:{type(exc).__name__}"
        samples.extend(
            TurnSample(player, turn, marker(run_id, player, turn), error=code)
            for turn in range(turns)
        )
        return
    async with socket:
        # After an error the conversation's state is unknown: stop this player.
        await _play(
            partial(_socket_turn, socket),
            run_id,
            player,
            turns,
            samples,
            turn_timeout=turn_timeout,
            pacing=pacing,
            stop_on_error=True,
        )


async def _play(
    one_turn: Callable[[TurnSample], Awaitable[None]],
    run_id: str,
    player: int,
    turns: int,
    samples: list[TurnSample],
    *,
    turn_timeout: float,
    pacing: Pacing,
    stop_on_error: bool,
) -> None:
    """A player's turns, one after another: think, then ``one_turn(sample)`` within
    ``turn_timeout``, its failure recorded on the sample."""
    rng = pacing.rng(player)
    for turn in range(turns):
        await pacing.think(rng, turn)
        sample = TurnSample(player, turn, marker(run_id, player, turn))
        samples.append(sample)
        try:
            await asyncio.wait_for(one_turn(sample), turn_timeout)
        except TimeoutError:
            sample.error = "timeout"
        except Exception as exc:
            sample.error = f"client:{type(exc).__name__}"
        if sample.error and stop_on_error:
            break


async def _socket_turn(socket, sample: TurnSample) -> None:
    frame = {"type": "user_message", "client_message_id": sample.marker, "content": sample.marker}
    started = time.perf_counter()
    await socket.send(json.dumps(frame))
    turn_id = None
    while True:
        event = json.loads(await socket.recv())
        kind = event.get("type")
        if kind == "turn.started" and event.get("client_message_id") == sample.marker:
            turn_id = event["turn_id"]
            if event.get("duplicate"):
                sample.error = "duplicate"
                return
        elif kind == "delta" and event.get("turn_id") == turn_id:
            if sample.ttfd_ms is None:
                sample.ttfd_ms = _elapsed_ms(started)
            sample.seqs.append(event["seq"])
            sample.text += event["text"]
        elif kind == "turn.completed" and event.get("turn_id") == turn_id:
            sample.turn_ms = _elapsed_ms(started)
            sample.final_content = event.get("content")
            return
        elif kind == "error" and event.get("turn_id") in (None, turn_id):
            sample.error = event.get("code") or "error"
            sample.turn_ms = _elapsed_ms(started)
            return
        else:
            # A delta of the previous turn after its turn.completed, or any event before
            # this turn's turn.started: the stream's order was broken.
            sample.stray_events += 1


async def sdk_player(
    base_url: str,
    run_id: str,
    player: int,
    turns: int,
    samples: list[TurnSample],
    *,
    turn_timeout: float,
    pacing: Pacing = Pacing(),
) -> None:
    """The baseline: the same turns streamed straight from the model server with the
    ``openai`` SDK, no socket, channel layer, database or prompt building in between."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0, timeout=turn_timeout)
    try:
        await _play(
            partial(_sdk_turn, client),
            run_id,
            player,
            turns,
            samples,
            turn_timeout=turn_timeout,
            pacing=pacing,
            stop_on_error=False,
        )
    finally:
        await client.close()


async def _sdk_turn(client, sample: TurnSample) -> None:
    started = time.perf_counter()
    stream = await client.chat.completions.create(
        model="scripted-model",
        messages=[{"role": "user", "content": sample.marker}],
        stream=True,
        stream_options={"include_usage": True},
    )
    seq = 0
    async for chunk in stream:
        text = chunk.choices[0].delta.content if chunk.choices else None
        if text:
            if sample.ttfd_ms is None:
                sample.ttfd_ms = _elapsed_ms(started)
            sample.seqs.append(seq)
            sample.text += text
            seq += 1
    sample.turn_ms = _elapsed_ms(started)


async def run_players(player_coroutines: Sequence, *, total_timeout: float) -> float:
    """Run all players at once, cancelling those still busy after ``total_timeout``;
    returns the wall time in seconds. Results are in the lists the players append to."""
    started = time.perf_counter()
    tasks = [asyncio.ensure_future(coro) for coro in player_coroutines]
    if not tasks:
        return 0.0
    _done, pending = await asyncio.wait(tasks, timeout=total_timeout)
    for task in pending:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return time.perf_counter() - started


def complete_samples(
    samples: list[TurnSample], run_id: str, players: int, turns: int
) -> list[TurnSample]:
    """``samples`` sorted, with every planned turn that never ran added as an error, and
    turns cut off mid-way by the run timeout marked as such."""
    seen = {(s.player, s.turn) for s in samples}
    for sample in samples:
        if sample.error is None and sample.turn_ms is None:
            sample.error = "run_timeout"
    for player in range(players):
        for turn in range(turns):
            if (player, turn) not in seen:
                samples.append(
                    TurnSample(player, turn, marker(run_id, player, turn), error="not_run")
                )
    return sorted(samples, key=lambda s: (s.player, s.turn))


def last_user_message(request: dict) -> dict | None:
    """The last user message of a chat-completions request body (the one with the turn's
    marker; earlier turns' markers sit in the history)."""
    users = [m for m in request.get("messages") or [] if m.get("role") == "user"]
    return users[-1] if users else None


def attach_server_timings(samples: Sequence[TurnSample], timings: Sequence[RequestTiming]):
    """Give each sample its request's ``first_chunk_ms``, matched by the marker in the last
    user message of the model request (earlier turns' markers sit in the history)."""
    by_marker: dict[str, RequestTiming] = {}
    for timing in timings:
        last = last_user_message(timing.request)
        content = last.get("content") if last else None
        found = MARKER.search(content) if isinstance(content, str) else None
        if found:
            by_marker[found.group(0)] = timing
    for sample in samples:
        timing = by_marker.get(sample.marker)
        if timing is not None:
            sample.server_first_chunk_ms = timing.first_chunk_ms
