"""ModelClient policy: retries, timeouts, broken streams, cancellation and call records."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.llm.errors import (
    ModelBadRequest,
    ModelBadResponse,
    ModelCancelled,
    ModelConnectionError,
    ModelError,
    ModelRateLimited,
    ModelServerError,
    ModelTimeout,
)
from roleplay.llm.provider import ModelClient
from roleplay.llm.providers import build_provider
from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer
from roleplay.llm.types import CallRecord, ModelRequest, ProviderConfig, StreamDone, TextDelta

MESSAGES = [{"role": "user", "content": "Tell me a story."}]
HANG_GUARD = 20  # seconds; only stops a broken test from hanging, never asserted on


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as srv:
        yield srv


class Harness:
    """A client on the scripted server that remembers records and requested sleeps."""

    def __init__(self, server: ScriptedOpenAIServer, timeout_ms: int = 5000) -> None:
        self.records: list[CallRecord] = []
        self.sleeps: list[float] = []
        config = ProviderConfig(
            provider="openai_compatible",
            model="scripted-model",
            base_url=server.base_url,
            timeout_ms=timeout_ms,
        )
        self.client = ModelClient(
            build_provider(config),
            recorder=self.records.append,
            purpose="test",
            retry_base_delay=0.001,
            retry_after_cap=2.0,
            sleep=self._sleep,
        )

    async def _sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(0)

    def outcomes(self) -> list[tuple[str, str | None, int]]:
        return [(r.outcome, r.error_code, r.attempts) for r in self.records]


async def drain(client: ModelClient, into: list[str], **kwargs: object) -> StreamDone:
    cancel = kwargs.pop("cancel", None)
    request = ModelRequest(MESSAGES, **kwargs)  # type: ignore[arg-type]
    async for event in client.stream(request, cancel=cancel):  # type: ignore[arg-type]
        if isinstance(event, TextDelta):
            into.append(event.text)
        else:
            return event
    raise AssertionError("stream ended without StreamDone")


@pytest.mark.asyncio
async def test_500_then_200_succeeds_on_the_second_attempt(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(Reply(status=500), Reply(content="recovered"))
    result = await h.client.complete(ModelRequest(MESSAGES))
    assert result.content == "recovered"
    assert result.attempts == 2
    assert len(server.requests) == 2
    assert len(h.sleeps) == 1
    assert h.outcomes() == [("ok", None, 2)]


@pytest.mark.asyncio
async def test_429_waits_at_least_retry_after(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(Reply(status=429, retry_after=0.5), Reply(content="fine"))
    result = await h.client.complete(ModelRequest(MESSAGES))
    assert result.attempts == 2
    assert h.sleeps[0] >= 0.5


@pytest.mark.asyncio
async def test_retry_after_is_capped(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(Reply(status=429, retry_after=3600), Reply(content="fine"))
    await h.client.complete(ModelRequest(MESSAGES))
    assert h.sleeps == [2.0]


@pytest.mark.asyncio
async def test_three_500s_fail_after_exactly_three_attempts(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(*[Reply(status=500)] * 4)
    with pytest.raises(ModelServerError):
        await h.client.complete(ModelRequest(MESSAGES))
    assert len(server.requests) == 3
    assert len(h.sleeps) == 2
    assert h.outcomes() == [("error", "model_server_error", 3)]


@pytest.mark.asyncio
async def test_400_is_not_retried(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(Reply(status=400), Reply(content="never sent"))
    with pytest.raises(ModelBadRequest):
        await h.client.complete(ModelRequest(MESSAGES))
    assert len(server.requests) == 1
    assert h.sleeps == []
    assert h.outcomes() == [("error", "model_bad_request", 1)]


@pytest.mark.asyncio
async def test_hanging_server_times_out_three_times(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.default = Reply(hang=True)
    with pytest.raises(ModelTimeout):
        await asyncio.wait_for(h.client.complete(ModelRequest(MESSAGES, timeout=0.3)), HANG_GUARD)
    assert h.outcomes() == [("error", "model_timeout", 3)]
    # under load the server thread may parse the last request after the client gave up
    assert await asyncio.to_thread(server.wait_for_requests, 3, HANG_GUARD)
    assert len(server.requests) == 3
    # the client gave up, so the server saw each hanging connection close
    assert await asyncio.to_thread(server.wait_for_disconnects, 3, HANG_GUARD)


@pytest.mark.asyncio
async def test_streams_time_out_too(server: ScriptedOpenAIServer) -> None:
    h = Harness(server, timeout_ms=200)
    server.default = Reply(hang=True)
    with pytest.raises(ModelTimeout):
        await asyncio.wait_for(drain(h.client, []), HANG_GUARD)
    assert h.outcomes() == [("error", "model_timeout", 3)]


@pytest.mark.asyncio
async def test_malformed_json_body_is_retried(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(Reply(malformed=True), Reply(content="clean"))
    result = await h.client.complete(ModelRequest(MESSAGES))
    assert (result.content, result.attempts) == ("clean", 2)


@pytest.mark.asyncio
async def test_malformed_sse_before_any_delta_is_retried(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(Reply(malformed=True), Reply(content="clean stream"))
    deltas: list[str] = []
    done = await drain(h.client, deltas)
    assert "".join(deltas) == "clean stream"
    assert done.result.attempts == 2
    assert h.outcomes() == [("ok", None, 2)]


@pytest.mark.asyncio
async def test_stream_failing_before_first_delta_is_retried(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(Reply(content="lost", cut_after=0), Reply(status=502), Reply(content="ok"))
    deltas: list[str] = []
    done = await drain(h.client, deltas)
    assert deltas == ["ok"]
    assert done.result.attempts == 3


@pytest.mark.asyncio
async def test_stream_cut_after_deltas_raises_without_retry(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(
        Reply(content="one two three four five six", cut_after=3), Reply(content="no retry")
    )
    deltas: list[str] = []
    with pytest.raises(ModelConnectionError):
        await drain(h.client, deltas)
    assert deltas == ["one", " two", " three"]
    assert len(server.requests) == 1
    assert h.outcomes() == [("error", "model_connection_error", 1)]
    assert h.records[0].usage.output_tokens > 0  # the partial reply was not free


@pytest.mark.asyncio
@pytest.mark.parametrize("from_elsewhere", [False, True])
async def test_cancel_event_mid_stream_aborts_the_request(
    server: ScriptedOpenAIServer, from_elsewhere: bool
) -> None:
    """Set by the consumer between two events, or by another task while the stream waits
    on its socket: either way the request is aborted and ``ModelCancelled`` is raised."""
    h = Harness(server)
    # a minute between chunks: the test only finishes if cancellation does not wait for one
    server.enqueue(Reply(content="alpha beta gamma delta", chunk_delay=60))
    cancel = asyncio.Event()
    first = asyncio.Event()
    deltas: list[str] = []

    async def consume() -> None:
        async for event in h.client.stream(ModelRequest(MESSAGES), cancel=cancel):
            assert isinstance(event, TextDelta)
            deltas.append(event.text)
            first.set()
            if not from_elsewhere:
                cancel.set()

    task = asyncio.create_task(consume())
    if from_elsewhere:
        await asyncio.wait_for(first.wait(), HANG_GUARD)
        await asyncio.sleep(0.05)  # the stream is now parked on the socket
        cancel.set()
    with pytest.raises(ModelCancelled):
        await asyncio.wait_for(task, HANG_GUARD)
    assert deltas == ["alpha"]
    assert not task.cancelled()  # the interruption became ModelCancelled, not a cancelled task
    assert h.outcomes() == [("cancelled", "model_cancelled", 1)]
    assert await asyncio.to_thread(server.wait_for_disconnects, 1, HANG_GUARD)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("cancel_by", "raised"),
    [("event", ModelCancelled), ("cancelling the task", asyncio.CancelledError)],
)
async def test_a_pending_completion_is_aborted(
    server: ScriptedOpenAIServer, cancel_by: str, raised: type[BaseException]
) -> None:
    """The cancel event ends the call with ModelCancelled; cancelling the task itself stays
    a task cancellation (not mistaken for the event). Both abort the request."""
    h = Harness(server)
    server.enqueue(Reply(content="late", delay=60))
    cancel = asyncio.Event()
    call = asyncio.create_task(h.client.complete(ModelRequest(MESSAGES), cancel=cancel))
    assert await asyncio.to_thread(server.wait_for_requests, 1, HANG_GUARD)
    if cancel_by == "event":
        cancel.set()
    else:
        call.cancel()
    with pytest.raises(raised):
        await asyncio.wait_for(call, HANG_GUARD)
    assert h.outcomes() == [("cancelled", "model_cancelled", 1)]
    assert await asyncio.to_thread(server.wait_for_disconnects, 1, HANG_GUARD)


@pytest.mark.asyncio
async def test_cancel_set_beforehand_sends_nothing(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    cancel = asyncio.Event()
    cancel.set()
    with pytest.raises(ModelCancelled):
        await h.client.complete(ModelRequest(MESSAGES), cancel=cancel)
    with pytest.raises(ModelCancelled):
        await drain(h.client, [], cancel=cancel)
    assert server.requests == []
    assert h.outcomes() == [("cancelled", "model_cancelled", 1)] * 2


@pytest.mark.asyncio
async def test_cancel_during_backoff_stops_retrying(server: ScriptedOpenAIServer) -> None:
    cancel = asyncio.Event()
    h = Harness(server)

    async def sleep_then_cancel(seconds: float) -> None:
        cancel.set()
        await asyncio.sleep(60)

    h.client._sleep = sleep_then_cancel
    server.default = Reply(status=503)
    with pytest.raises(ModelCancelled):
        await asyncio.wait_for(h.client.complete(ModelRequest(MESSAGES), cancel=cancel), HANG_GUARD)
    assert len(server.requests) == 1
    assert h.outcomes() == [("cancelled", "model_cancelled", 1)]


@pytest.mark.asyncio
async def test_task_cancellation_propagates_and_is_recorded(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(Reply(content="slow", delay=60))
    call = asyncio.create_task(h.client.complete(ModelRequest(MESSAGES)))
    assert await asyncio.to_thread(server.wait_for_requests, 1, HANG_GUARD)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert h.outcomes() == [("cancelled", "model_cancelled", 1)]


@pytest.mark.asyncio
async def test_abandoned_stream_is_recorded_once_as_cancelled(
    server: ScriptedOpenAIServer,
) -> None:
    h = Harness(server)
    server.enqueue(Reply(content="a b c d e f"))
    stream = h.client.stream(ModelRequest(MESSAGES))
    first = await anext(stream)
    assert first == TextDelta("a")
    await stream.aclose()  # type: ignore[attr-defined]
    assert h.outcomes() == [("cancelled", "model_cancelled", 1)]


@pytest.mark.asyncio
async def test_recorder_sees_exactly_one_record_per_call(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.enqueue(
        Reply(content="a"),
        Reply(status=500),
        Reply(content="b"),
        Reply(status=401),
        Reply(content="c d e"),
    )
    await h.client.complete(ModelRequest(MESSAGES))
    await h.client.complete(ModelRequest(MESSAGES))
    with pytest.raises(ModelError):
        await h.client.complete(ModelRequest(MESSAGES))
    await drain(h.client, [])
    assert h.outcomes() == [
        ("ok", None, 1),
        ("ok", None, 2),
        ("error", "model_auth_error", 1),
        ("ok", None, 1),
    ]
    assert {r.purpose for r in h.records} == {"test"}
    assert all(r.model == "scripted-model" and r.latency_ms >= 0 for r in h.records)


@pytest.mark.asyncio
async def test_async_and_failing_recorders(server: ScriptedOpenAIServer) -> None:
    seen: list[CallRecord] = []

    async def async_recorder(record: CallRecord) -> None:
        seen.append(record)

    def broken_recorder(record: CallRecord) -> None:
        raise RuntimeError("database down")

    provider = Harness(server).client.provider
    assert (
        await ModelClient(provider, recorder=async_recorder).complete(ModelRequest(MESSAGES))
    ).content
    assert [r.outcome for r in seen] == ["ok"]
    # a failing recorder is logged, never turned into a failed model call
    assert (
        await ModelClient(provider, recorder=broken_recorder).complete(ModelRequest(MESSAGES))
    ).content


@pytest.mark.asyncio
async def test_many_concurrent_streams(server: ScriptedOpenAIServer) -> None:
    h = Harness(server)
    server.default = Reply.from_callable(
        lambda request: Reply(content=f"reply to {request['messages'][0]['content']}", chunks=5)
    )

    async def one(index: int) -> str:
        deltas: list[str] = []
        async for event in h.client.stream(
            ModelRequest([{"role": "user", "content": f"n{index}"}])
        ):
            if isinstance(event, TextDelta):
                deltas.append(event.text)
        return "".join(deltas)

    replies = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(50))), 60)
    assert replies == [f"reply to n{i}" for i in range(50)]
    assert len(server.timings) == 50
    assert [r.outcome for r in h.records] == ["ok"] * 50


# --- backoff policy, without a server ------------------------------------------------


@settings(deadline=None)  # shared CI machines stall; correctness, not speed
@given(
    attempt=st.integers(min_value=1, max_value=12),
    base=st.floats(min_value=0.001, max_value=2.0),
    retry_after=st.none() | st.floats(min_value=0, max_value=1e6),
    seed=st.integers(),
)
def test_backoff_is_bounded_and_honours_retry_after(
    attempt: int, base: float, retry_after: float | None, seed: int
) -> None:
    client = ModelClient(
        build_provider(ProviderConfig(provider="openai_compatible", model="m")),
        retry_base_delay=base,
        retry_max_delay=8.0,
        retry_after_cap=30.0,
        rng=random.Random(seed),
    )
    ceiling = min(8.0, base * 2 ** (attempt - 1))
    delay = client.backoff_delay(attempt, ModelRateLimited("slow down", retry_after=retry_after))
    if retry_after is None:
        assert ceiling / 2 <= delay <= ceiling
    else:
        assert min(retry_after, 30.0) <= delay <= max(ceiling, 30.0)


def test_errors_carry_stable_codes_and_retryability() -> None:
    expected = {
        ModelTimeout: ("model_timeout", True),
        ModelRateLimited: ("model_rate_limited", True),
        ModelServerError: ("model_server_error", True),
        ModelConnectionError: ("model_connection_error", True),
        ModelBadRequest: ("model_bad_request", False),
        ModelBadResponse: ("model_bad_response", True),
        ModelCancelled: ("model_cancelled", False),
    }
    for cls, (code, retryable) in expected.items():
        error = cls("x")
        assert isinstance(error, ModelError)
        assert (error.code, error.retryable) == (code, retryable)
    generic = ModelError("custom_code", "message", True)
    assert (generic.code, generic.message, generic.retryable) == ("custom_code", "message", True)
