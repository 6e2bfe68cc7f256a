"""What a prompt cache saves on the bundled local model: the time to first token of the
last turn of a long conversation, with the model's prompt cache on and off.

The conversation is shaped as a cache sees a real one: a fixed long history (a scene and
many exchanges, about ``history_tokens`` long), then one new exchange per turn, so each
turn's prompt starts with the whole prompt of the turn before. The earlier replies are
scripted rather than the model's own, so both runs send the very same prompts. With the
cache on, all turns run in order and the last one is timed; with it off, no turn leaves
anything behind for the next, so only the last turn is run (and timed). Each run first
loads its model process and answers a short unrelated prompt, so neither pays for loading.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass
from typing import Any

from console.tokens import count_tokens
from roleplay.llm.bundled import BUNDLED_MODEL_NAME
from roleplay.llm.providers import build_provider
from roleplay.llm.types import ModelRequest, ProviderConfig, StreamDone, TextDelta

CHARACTER = "Mira"
SCENE = (
    "Mira keeps the lighthouse on the northern cape. She is dry, patient and observant, and "
    "speaks in short sentences. The storm season has begun; supply boats come once a week."
)
USER_LINES = (
    "Did the boat bring the lamp oil this week?",
    "I saw lights on the water last night, out past the reef.",
    "How long have you kept this lighthouse?",
    "The wind is turning east again. Should we close the shutters?",
    "Tell me about the keeper before you.",
    "What do you do when the fog comes in?",
    "There is a crack in the lens housing, did you notice?",
    "Someone left footprints on the stairs this morning.",
)
REPLY_LINES = (
    "Mira wipes her hands on a rag and looks toward the window.",
    "The oil came, two barrels short. We will make it last.",
    "She climbs three steps, then stops to listen to the wind.",
    "Forty winters. The sea has not changed its mind about anything.",
    "The old keeper wrote everything down. The logbooks are in the chest.",
    "Fog means the horn, every two minutes, until it lifts.",
    "I noticed. The glass will hold until the boat brings putty.",
    "Footprints, yes. Small ones. Not yours and not mine.",
)


def _line(rng: random.Random, pool: tuple[str, ...], words: int) -> str:
    """A deterministic line of about ``words`` words drawn from ``pool``."""
    parts: list[str] = []
    while sum(len(p.split()) for p in parts) < words:
        parts.append(rng.choice(pool))
    return " ".join(parts)


def history(history_tokens: int, seed: int = 7) -> list[dict[str, Any]]:
    """A scene and alternating exchanges until about ``history_tokens`` (cl100k)."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SCENE}]
    used = count_tokens(SCENE)
    while used < history_tokens:
        user = _line(rng, USER_LINES, 20)
        reply = _line(rng, REPLY_LINES, 40)
        messages.append({"role": "user", "content": user})
        messages.append({"role": "assistant", "name": CHARACTER, "content": reply})
        used += count_tokens(user) + count_tokens(reply) + 4
    return messages


def turn_messages(base: list[dict[str, Any]], turn: int) -> list[dict[str, Any]]:
    """The prompt of turn ``turn`` (1-based): the history, the scripted exchanges of the
    turns before, and this turn's new user line."""
    rng = random.Random(1000 + turn)
    messages = list(base)
    for earlier in range(1, turn):
        rng_earlier = random.Random(1000 + earlier)
        messages.append({"role": "user", "content": _line(rng_earlier, USER_LINES, 12)})
        messages.append(
            {"role": "assistant", "name": CHARACTER, "content": _line(rng_earlier, REPLY_LINES, 24)}
        )
    messages.append({"role": "user", "content": _line(rng, USER_LINES, 12)})
    return messages


@dataclass
class Timed:
    """One turn: time to first token and in all (ms), prompt and cached tokens."""

    turn: int
    ttft_ms: float
    total_ms: float
    prompt_tokens: int
    cached_tokens: int


def config(cache: bool, *, context: int, threads: int | None, cache_mb: int) -> ProviderConfig:
    extra: dict[str, Any] = {"seed": 7}
    if threads:
        extra["n_threads"] = threads
    return ProviderConfig(
        provider="llama_cpp",
        model=BUNDLED_MODEL_NAME,
        context_limit=context,
        max_output_tokens=8,
        temperature=0.7,
        prompt_cache="auto" if cache else "off",
        prompt_cache_mb=cache_mb,
        timeout_ms=600_000,  # a whole long prompt on a busy small machine takes minutes
        extra=extra,
    )


async def timed(provider: Any, messages: list[dict[str, Any]], turn: int) -> Timed:
    started = time.perf_counter()
    first: float | None = None
    done: StreamDone | None = None
    async for event in provider.stream(ModelRequest(messages)):
        if isinstance(event, TextDelta) and first is None:
            first = time.perf_counter()
        elif isinstance(event, StreamDone):
            done = event
    ended = time.perf_counter()
    assert done is not None
    usage = done.result.usage
    return Timed(
        turn=turn,
        ttft_ms=round(((first or ended) - started) * 1000, 1),
        total_ms=round((ended - started) * 1000, 1),
        prompt_tokens=usage.input_tokens,
        cached_tokens=usage.cached_tokens,
    )


async def run(
    cache: bool,
    *,
    turns: int,
    history_tokens: int,
    context: int = 8192,
    threads: int | None = None,
    cache_mb: int = 256,
) -> list[Timed]:
    """The timed turns of one run (all of them with the cache, the last one without)."""
    provider = build_provider(config(cache, context=context, threads=threads, cache_mb=cache_mb))
    base = history(history_tokens)
    try:
        await timed(provider, [{"role": "user", "content": "Hello."}], 0)  # load, warm up
        wanted = range(1, turns + 1) if cache else range(turns, turns + 1)
        return [await timed(provider, turn_messages(base, turn), turn) for turn in wanted]
    finally:
        await provider.aclose()


def report(on: list[Timed], off: list[Timed], *, threads: int) -> dict[str, Any]:
    last_on, last_off = on[-1], off[-1]
    return {
        "model": BUNDLED_MODEL_NAME,
        "threads": threads,
        "turn": last_on.turn,
        "prompt_tokens": last_on.prompt_tokens,
        "ttft_ms": {"cache_on": last_on.ttft_ms, "cache_off": last_off.ttft_ms},
        "speedup": round(last_off.ttft_ms / last_on.ttft_ms, 2) if last_on.ttft_ms else None,
        "goal_speedup": 3.0,
        "cached_tokens": {"cache_on": last_on.cached_tokens, "cache_off": last_off.cached_tokens},
        "cold_first_turn_ttft_ms": on[0].ttft_ms,
        "turns_cache_on": [asdict(t) for t in on],
        "turns_cache_off": [asdict(t) for t in off],
    }
