"""The lookup's own rules (``roleplay.dio.plugin._lookup``), without a database: a verified
prompt comes back; a wrong SHA-256, a backend's ``DioError``, any other exception and a
timeout each come back as None with the degradation recorded; a cancel propagates."""

from __future__ import annotations

import asyncio

import pytest

from roleplay.dio.engine.ports import DioError, Identity
from roleplay.dio.plugin import DioState, _lookup
from roleplay.scenarios.config import Dio
from tests.dio.turn_support import MemoryBackend

WHO = Identity("7", "c-1", "character:9")
TEXT = "Mira answers in short sentences."


def state_with(backend: MemoryBackend, timeout_ms: int = 3000) -> DioState:
    config = Dio(mode="internal", modelConfigId="m", timeoutMs=timeout_ms)
    return DioState(config=config, backend=backend, identity=WHO)


def test_a_verified_prompt_comes_back_and_nothing_is_degraded():
    backend = MemoryBackend()
    backend.put(WHO, TEXT, version=4)
    state = state_with(backend)
    active = asyncio.run(_lookup(state))
    assert active is not None and active.compiled_prompt == TEXT and active.version == 4
    assert "degraded" not in state.trace


def test_no_prompt_is_none_without_degradation():
    state = state_with(MemoryBackend())
    assert asyncio.run(_lookup(state)) is None and state.trace == {}


@pytest.mark.parametrize(
    ("arrange", "code"),
    [
        (lambda b: b.put(WHO, TEXT, sha="f" * 64), "dio_hash_mismatch"),
        (lambda b: setattr(b, "failure", DioError("dio_unavailable", "down")), "dio_unavailable"),
        (lambda b: setattr(b, "failure", DioError("dio_auth", "401")), "dio_auth"),
        (lambda b: setattr(b, "failure", ValueError("bad json")), "dio_unavailable"),
        (lambda b: setattr(b, "delay_s", 1.0), "dio_timeout"),
    ],
)
def test_each_failure_of_the_lookup_is_a_degradation(arrange, code):
    backend = MemoryBackend()
    backend.put(WHO, TEXT)
    arrange(backend)
    state = state_with(backend, timeout_ms=100)
    assert asyncio.run(_lookup(state)) is None
    assert state.trace["status"] == "degraded" and state.trace["degraded"]["code"] == code


def test_a_cancel_is_not_a_degradation_it_propagates():
    backend = MemoryBackend()
    backend.put(WHO, TEXT)
    backend.delay_s = 5.0
    state = state_with(backend)

    async def cancelled():
        task = asyncio.ensure_future(_lookup(state))
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancelled())
    assert "degraded" not in state.trace
