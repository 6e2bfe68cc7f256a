"""A real HTTP server that speaks OpenAI chat completions with scripted replies and faults.

Tests and benchmarks point the real ``openai_compat`` provider at it, so the whole client
path (SDK, HTTP, SSE parsing, retries, cancellation) runs without a network or a model.
It is the stdlib ``ThreadingHTTPServer`` on 127.0.0.1 in a daemon thread: one thread per
connection, enough for ~50 concurrent streaming clients on a small machine.

Replies are taken FIFO from ``enqueue()``; when the queue is empty the ``default`` reply is
used. A ``Reply`` can stream in N chunks with delays, fail with a status (and
``Retry-After``), send malformed JSON/SSE, cut the stream, or hang until the client leaves.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from console.embedding.hashing import HashingEmbedder
from console.tokens import count_messages, count_tokens

from . import scripted_text
from .scripted_images import ScriptedImages
from .scripted_moderation import ScriptedModeration, is_text
from .wire import ClientGone, TrackingServer, WireHandler, envelope, error_body


@dataclass
class Reply:
    """One scripted answer. ``tool_calls`` items are ``{"name", "arguments", "id"?}``
    (arguments a dict or a JSON string) or already in the OpenAI wire shape.

    ``cut_after`` counts content/tool chunks sent before the connection is dropped without
    ``[DONE]``; ``chunks=None`` streams content word by word. ``usage=None`` computes usage
    with cl100k counts; ``usage={}`` sends none, like servers that do not report it.
    ``cached_tokens`` adds ``prompt_tokens_details.cached_tokens`` to the usage, as servers
    with a prompt cache report the prompt tokens they did not process again.
    ``tool_pieces`` shapes streamed tool calls as servers do: ``openai`` (the id and name
    once, then argument pieces), ``repeat`` (every piece repeats the id and the whole name,
    as llama.cpp's Python server does) or ``no_index`` (pieces without ``index``).
    ``empty_stream`` answers a stream with 200 and no events at all, as llama.cpp's Python
    server does for an error it meets before the first token. ``reasoning`` is sent apart
    from the content, under ``reasoning_field``, as servers that parse a reasoning model's
    scratchpad do (streamed before the content, word by word).
    """

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    chunks: int | None = None
    chunk_delay: float = 0.0
    delay: float = 0.0
    status: int = 200
    error_body: dict[str, Any] | None = None
    retry_after: float | None = None
    malformed: bool = False
    cut_after: int | None = None
    hang: bool = False
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None
    cached_tokens: int | None = None
    tool_pieces: str = "openai"
    empty_stream: bool = False
    reasoning: str = ""
    reasoning_field: str = "reasoning_content"
    responder: Callable[[dict[str, Any]], Reply] | None = None

    @classmethod
    def from_callable(cls, fn: Callable[[dict[str, Any]], Reply]) -> Reply:
        """A reply decided per request by ``fn(request_json)``."""
        return cls(responder=fn)

    def resolve(self, request: dict[str, Any]) -> Reply:
        reply = self
        while reply.responder is not None:
            reply = reply.responder(request)
        return reply


@dataclass(frozen=True)
class RequestTiming:
    """Server-side timing of one finished request, for benchmarks that subtract the
    server's own share: ``first_chunk_ms`` is from the request line to the first streamed
    content/tool chunk written (``None`` when nothing was streamed)."""

    request: dict[str, Any]
    total_ms: float
    first_chunk_ms: float | None
    abandoned: bool


def split_content(content: str, chunks: int | None) -> list[str]:
    """Pieces that concatenate back to ``content``: words, or ``chunks`` near-equal parts."""
    if not content:
        return []
    if chunks is None:
        return re.findall(r"\s*\S+|\s+$", content)
    count = max(1, min(chunks, len(content)))
    size, extra = divmod(len(content), count)
    pieces, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        pieces.append(content[start:end])
        start = end
    return pieces


def _wire_tool_calls(tool_calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    wire = []
    for index, call in enumerate(tool_calls):
        function = call.get("function", call)
        arguments = function.get("arguments", {})
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        wire.append(
            {
                "id": call.get("id") or f"call_{index}_{uuid.uuid4().hex[:8]}",
                "type": "function",
                "function": {"name": function["name"], "arguments": arguments},
            }
        )
    return wire


class ScriptedOpenAIServer:
    """The server; use as a context manager or call ``start()``/``stop()``."""

    def __init__(self, default: Reply | None = None, model: str = "scripted-model") -> None:
        self.default = default or Reply(content="OK")
        self.model = model
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._timings: list[float] = []
        self._request_timings: list[RequestTiming] = []
        self._disconnects = 0
        self._changed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        # ``/v1/embeddings``: hashing vectors of this length (or the request's
        # ``dimensions``), or an error with ``embedding_status``; requests recorded apart.
        self.embedding_dimensions = 64
        self.embedding_status = 200
        self._embedding_requests: list[dict[str, Any]] = []
        # The image routes' script and records (``scripted_images``).
        self.images = ScriptedImages()
        # ``/v1/moderations``: flags scripted by trigger words (``scripted_moderation``).
        self.moderation = ScriptedModeration()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _Server(("127.0.0.1", 0), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def root_url(self) -> str:
        """The server without ``/v1``: an Automatic1111 config's base URL."""
        return self.base_url.removesuffix("/v1")

    # --- scripting and inspection ------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def clear(self) -> None:
        """Forget queued replies and recorded requests, timings and disconnects."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self._timings.clear()
            self._request_timings.clear()
            self._embedding_requests.clear()
            self._disconnects = 0
        self.embedding_status, self.embedding_dimensions = 200, 64
        self.images.reset()
        self.moderation.reset()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat-completions request body received, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        """Every embeddings request body received, with its ``authorization`` header."""
        with self._lock:
            return list(self._embedding_requests)

    def _embeddings(self, request: dict[str, Any], authorization: str | None) -> tuple:
        with self._lock:
            self._embedding_requests.append(request | {"authorization": authorization})
        if self.embedding_status != 200:
            return self.embedding_status, error_body(self.embedding_status, "scripted failure")
        texts = request.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) and t for t in texts):
            return 400, error_body(400, "input must be a non-empty string or list of them")
        size = request.get("dimensions") or self.embedding_dimensions
        vectors = HashingEmbedder(size).embed(texts)
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        data.reverse()  # the index orders them, not the position
        body = {"object": "list", "data": data, "model": request.get("model", self.model)}
        return 200, body

    @property
    def timings(self) -> list[float]:
        """Server-side milliseconds per finished request (scripted delays included)."""
        with self._lock:
            return list(self._timings)

    @property
    def request_timings(self) -> list[RequestTiming]:
        """Per finished request: its body, total and first-chunk server milliseconds."""
        with self._lock:
            return list(self._request_timings)

    @property
    def disconnects(self) -> int:
        """Responses the client abandoned before the server finished them."""
        with self._lock:
            return self._disconnects

    def wait_for_disconnects(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Block until ``count`` abandoned responses were seen, or ``timeout`` passes."""
        with self._changed:
            return self._changed.wait_for(lambda: self._disconnects >= count, timeout)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: len(self._requests) >= count, timeout)

    # --- used by the handler ----------------------------------------------------------

    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._changed:
            self._requests.append(request)
            reply = self._queue.popleft() if self._queue else self.default
            self._changed.notify_all()
        return reply.resolve(request)

    def _finished(
        self,
        elapsed_ms: float,
        abandoned: bool,
        request: dict[str, Any] | None = None,
        first_chunk_ms: float | None = None,
    ) -> None:
        with self._changed:
            self._timings.append(elapsed_ms)
            self._request_timings.append(
                RequestTiming(request or {}, elapsed_ms, first_chunk_ms, abandoned)
            )
            if abandoned:
                self._disconnects += 1
            self._changed.notify_all()


class _Server(TrackingServer):
    def __init__(self, address: tuple[str, int], handler: type, owner: ScriptedOpenAIServer):
        self.owner = owner
        super().__init__(address, handler)


class _Handler(WireHandler):
    server: _Server

    @property
    def owner(self) -> ScriptedOpenAIServer:
        return self.server.owner

    def do_GET(self) -> None:
        if self.path.startswith("/files/"):
            status, data, headers = self.owner.images.file(self.path)
            content_type = self.owner.images.script.content_type
            self.send_raw(status, data or b"", content_type if data else "text/plain", headers)
        elif self.path.rstrip("/") == "/v1/models":
            body = {
                "object": "list",
                "data": [{"id": self.owner.model, "object": "model", "owned_by": "scripted"}],
            }
            self.send_json(200, body)
        else:
            self.send_json(404, error_body(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        self._started = time.perf_counter()
        self._first_chunk_ms: float | None = None
        request = self.read_json()
        if request is None:
            return
        if self.path.rstrip("/") == "/v1/moderations" and is_text(request):
            self.send_json(*self.owner.moderation.answer(request))
            return
        if self.path.rstrip("/") == "/v1/embeddings":
            self.send_json(*self.owner._embeddings(request, self.headers.get("Authorization")))
            return
        if self._image_route(request):
            return
        wire = scripted_text.wire_of(self.path)
        if wire is not None:
            self._text(wire, request)
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.send_json(404, error_body(404, f"no route {self.path}"))
            return
        reply = self.owner._next_reply(request)
        self._pending: dict[str, Any] | None = request
        abandoned = False
        try:
            self._answer(request, reply)
        except (ClientGone, ConnectionError, TimeoutError):
            abandoned = True
            self.close_connection = True
        finally:
            self._record_timing(abandoned)

    def _text(self, wire: str, request: dict[str, Any]) -> None:
        """A text-completion route (``scripted_text``): recorded with the chat requests."""
        reply = self.owner._next_reply(request | {"path": self.path})
        stream = scripted_text.streams(self.path, request)
        try:
            pieces = split_content(reply.content, reply.chunks)
            scripted_text.answer(self, wire, request, reply, pieces, stream=stream)
        except (ClientGone, ConnectionError, TimeoutError):
            self.owner._finished(0.0, True)
            self.close_connection = True

    def before_last_write(self) -> None:
        self._record_timing()

    def _image_route(self, request: dict[str, Any]) -> bool:
        """Answer an image or moderation request (``scripted_images``); False for others."""
        images, path = self.owner.images, self.path.rstrip("/")
        routes = {
            "/images/generations": lambda: images.generations(request, self.owner.root_url),
            "/moderations": lambda: images.moderations(request),
            "/sdapi/v1/txt2img": lambda: images.txt2img(request),
        }
        suffix = next((s for s in routes if path.endswith(s)), None)
        if suffix is None:
            return False
        answer = routes[suffix]
        try:
            if suffix != "/moderations":
                images.record(suffix.lstrip("/"), request)
                self.wait(images.script.delay, self.owner._stopping)
            self.send_json(*answer())
        except (ClientGone, ConnectionError, TimeoutError):
            self.close_connection = True
        return True

    def _record_timing(self, abandoned: bool = False) -> None:
        """Record this request's timing once, *before* its last bytes are written.

        A client that has read the whole response can then rely on seeing the timing,
        which benchmarks and tests read right after their call returns.
        """
        request = getattr(self, "_pending", None)
        if request is None:
            return
        self._pending = None
        elapsed_ms = (time.perf_counter() - self._started) * 1000.0
        self.owner._finished(elapsed_ms, abandoned, request, self._first_chunk_ms)

    # --- answering ----------------------------------------------------------------------

    def _answer(self, request: dict[str, Any], reply: Reply) -> None:
        if reply.hang:
            while True:
                self.wait(1.0, self.owner._stopping)
        self.wait(reply.delay, self.owner._stopping)
        if reply.status != 200:
            headers = {}
            if reply.retry_after is not None:
                headers["Retry-After"] = f"{reply.retry_after:g}"
            body = reply.error_body or error_body(reply.status, "scripted failure")
            self.send_json(reply.status, body, headers)
            return
        if request.get("stream"):
            self._stream(request, reply)
            return
        if reply.malformed:
            self.send_raw(200, b'{"id": "chatcmpl-broken", "choices": [', "application/json")
            return
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if reply.reasoning:
            message[reply.reasoning_field] = reply.reasoning
        calls = _wire_tool_calls(reply.tool_calls)
        if calls:
            message["tool_calls"] = calls
        body = envelope(self.owner.model, "chat.completion")
        body["choices"] = [{"index": 0, "message": message, "finish_reason": _finish(reply, calls)}]
        if reply.usage != {}:
            body["usage"] = _usage(request, reply, calls)
        self.send_json(200, body)

    def _stream(self, request: dict[str, Any], reply: Reply) -> None:
        self.start_stream()
        base = envelope(self.owner.model, "chat.completion.chunk")

        def event(delta: dict[str, Any], finish: str | None = None) -> None:
            chunk = dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
            self.event(chunk)

        if reply.malformed:
            self.chunk(b'data: {"id": "chatcmpl-broken", "choices": [\n\n')
            self.end_stream(done=False)
            return
        if reply.empty_stream:
            self.end_stream(done=False)
            return
        event({"role": "assistant", "content": ""})
        calls = _wire_tool_calls(reply.tool_calls)
        pieces: list[dict[str, Any]] = [
            {reply.reasoning_field: piece} for piece in split_content(reply.reasoning, None)
        ]
        pieces += [{"content": piece} for piece in split_content(reply.content, reply.chunks)]
        for index, call in enumerate(calls):
            arguments = call["function"]["arguments"]
            head = dict(call, index=index, function={"name": call["function"]["name"]})
            head["function"]["arguments"] = ""
            pieces.append({"tool_calls": [head]})
            for fragment in split_content(arguments, max(1, min(3, len(arguments)))):
                piece: dict[str, Any] = {"index": index, "function": {"arguments": fragment}}
                if reply.tool_pieces == "repeat":
                    piece = dict(head, function={**head["function"], "arguments": fragment})
                pieces.append({"tool_calls": [piece]})
        if reply.tool_pieces == "no_index":
            for delta in pieces:
                for piece in delta.get("tool_calls", []):
                    piece.pop("index", None)
        for sent, delta in enumerate(pieces):
            if reply.cut_after is not None and sent >= reply.cut_after:
                self.cut()
                return
            if sent and reply.chunk_delay:
                self.wait(reply.chunk_delay, self.owner._stopping)
            event(delta)
            if self._first_chunk_ms is None:
                self._first_chunk_ms = (time.perf_counter() - self._started) * 1000.0
        if reply.cut_after is not None:
            self.cut()
            return
        event({}, _finish(reply, calls))
        if (request.get("stream_options") or {}).get("include_usage") and reply.usage != {}:
            usage_chunk = dict(base, choices=[], usage=_usage(request, reply, calls))
            self.event(usage_chunk)
        self.end_stream()


def _finish(reply: Reply, calls: list[dict[str, Any]]) -> str:
    if calls and reply.finish_reason == "stop":
        return "tool_calls"
    return reply.finish_reason


def _usage(request: dict[str, Any], reply: Reply, calls: list[dict[str, Any]]) -> dict[str, Any]:
    usage: dict[str, Any] = _counts(request, reply, calls)
    if reply.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return usage


def _counts(request: dict[str, Any], reply: Reply, calls: list[dict[str, Any]]) -> dict[str, int]:
    if reply.usage is not None:
        return dict(reply.usage)
    prompt = count_messages(request.get("messages") or [])
    completion = count_tokens(reply.content) + sum(
        count_tokens(c["function"]["name"]) + count_tokens(c["function"]["arguments"])
        for c in calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


__all__ = ["Reply", "RequestTiming", "ScriptedOpenAIServer", "split_content"]
