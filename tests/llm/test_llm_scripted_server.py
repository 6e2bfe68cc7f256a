"""The scripted server's own wire behaviour, checked with a plain stdlib HTTP client."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer, split_content


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(model="tiny") as srv:
        yield srv


def request(
    server: ScriptedOpenAIServer, method: str, path: str, body: Any = None
) -> tuple[int, dict[str, str], bytes]:
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def sse_events(raw: bytes) -> list[str]:
    return [line[6:] for line in raw.decode().split("\n") if line.startswith("data: ")]


CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}


def test_base_url_and_models_listing(server: ScriptedOpenAIServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.base_url.endswith("/v1")
    status, _, body = request(server, "GET", "/v1/models")
    assert status == 200
    assert json.loads(body)["data"][0]["id"] == "tiny"


def test_unknown_routes_and_bad_json_are_client_errors(server: ScriptedOpenAIServer) -> None:
    assert request(server, "GET", "/v1/nothing")[0] == 404
    assert request(server, "POST", "/v1/chat/completions", body=[1, 2])[0] == 400


def test_json_reply_shape(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="hello", tool_calls=[{"name": "f", "arguments": {"x": 1}}]))
    status, headers, body = request(server, "POST", "/v1/chat/completions", CHAT)
    assert status == 200 and headers["Content-Type"] == "application/json"
    data = json.loads(body)
    choice = data["choices"][0]
    assert choice["message"]["content"] == "hello"
    call = choice["message"]["tool_calls"][0]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"]) == {"x": 1}
    assert choice["finish_reason"] == "tool_calls"
    usage = data["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert server.requests == [CHAT]


def test_sse_stream_shape_with_usage_and_done(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="a b c", finish_reason="length"))
    body = dict(CHAT, stream=True, stream_options={"include_usage": True})
    status, headers, raw = request(server, "POST", "/v1/chat/completions", body)
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    events = sse_events(raw)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "a b c"
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


def test_stream_without_include_usage_sends_no_usage_chunk(server: ScriptedOpenAIServer) -> None:
    _, _, raw = request(server, "POST", "/v1/chat/completions", dict(CHAT, stream=True))
    chunks = [json.loads(e) for e in sse_events(raw)[:-1]]
    assert all(c["choices"] for c in chunks)


def test_error_status_with_retry_after_header(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(status=429, retry_after=1.5))
    status, headers, body = request(server, "POST", "/v1/chat/completions", CHAT)
    assert status == 429
    assert headers["Retry-After"] == "1.5"
    assert json.loads(body)["error"]["type"] == "rate_limit_error"


def test_custom_error_body(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(status=400, error_body={"error": {"message": "too long"}}))
    assert json.loads(request(server, "POST", "/v1/chat/completions", CHAT)[2]) == {
        "error": {"message": "too long"}
    }


def test_malformed_json_body(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(malformed=True))
    _, _, body = request(server, "POST", "/v1/chat/completions", CHAT)
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)


def test_cut_stream_is_an_incomplete_http_body(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="one two three four", cut_after=2))
    with pytest.raises(http.client.IncompleteRead) as caught:
        request(server, "POST", "/v1/chat/completions", dict(CHAT, stream=True))
    partial = sse_events(caught.value.partial)
    assert "[DONE]" not in partial
    texts = [json.loads(e)["choices"][0]["delta"].get("content") for e in partial]
    assert texts == ["", "one", " two"]


def test_fifo_queue_then_default(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="first"), Reply(content="second"))
    server.default = Reply(content="fallback")
    contents = [
        json.loads(request(server, "POST", "/v1/chat/completions", CHAT)[2])["choices"][0][
            "message"
        ]["content"]
        for _ in range(3)
    ]
    assert contents == ["first", "second", "fallback"]
    assert len(server.timings) == 3 and all(t >= 0 for t in server.timings)
    server.clear()
    assert server.requests == [] and server.timings == []


def test_stop_releases_a_hanging_request() -> None:
    srv = ScriptedOpenAIServer(default=Reply(hang=True)).start()
    outcome: list[str] = []

    def call() -> None:
        try:
            request(srv, "POST", "/v1/chat/completions", CHAT)
            outcome.append("answered")
        except (http.client.HTTPException, OSError):
            outcome.append("dropped")

    worker = threading.Thread(target=call)
    worker.start()
    assert srv.wait_for_requests(1, timeout=10)
    srv.stop()
    worker.join(timeout=10)
    assert outcome == ["dropped"]


@settings(deadline=None)  # shared CI machines stall; correctness, not speed
@given(content=st.text(max_size=200), chunks=st.none() | st.integers(min_value=1, max_value=50))
def test_split_content_reassembles(content: str, chunks: int | None) -> None:
    pieces = split_content(content, chunks)
    assert "".join(pieces) == content
    assert all(pieces)
    if chunks is not None and content:
        assert len(pieces) == min(chunks, len(content))
