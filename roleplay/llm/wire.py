"""The server side of the OpenAI chat-completions wire format, shared by our two servers.

The scripted test server and the local model process both answer ``/v1/chat/completions``
from the stdlib HTTP server; this is what they have in common: response envelopes, error
bodies, chunked Server-Sent Events, and noticing a client that hung up.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

POLL_SECONDS = 0.02  # between checks for a departed client while waiting


def envelope(model: str, kind: str) -> dict[str, Any]:
    """The fields every completion (``chat.completion``) or chunk (``...chunk``) carries."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": kind,
        "created": int(time.time()),
        "model": model,
    }


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
    }.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "code": None, "param": None}}


class ClientGone(Exception):
    """The client closed the connection before the response was complete."""


class TrackingServer(ThreadingHTTPServer):
    """A threading server that can drop its keep-alive connections when it stops."""

    daemon_threads = True
    request_queue_size = 256  # ~50 clients may connect in the same instant

    def __init__(self, address: tuple[str, int], handler: type) -> None:
        self._sockets: set[socket.socket] = set()
        self._sockets_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._sockets_lock:
            self._sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._sockets_lock:
            self._sockets.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-response is expected here, not worth a traceback."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """Drop keep-alive connections so their handler threads end with the server."""
        with self._sockets_lock:
            sockets = list(self._sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class WireHandler(BaseHTTPRequestHandler):
    """JSON and SSE answers over HTTP/1.1 keep-alive, with chunked streams so a cut shows."""

    protocol_version = "HTTP/1.1"
    # Each SSE chunk is its own small write: without TCP_NODELAY, Nagle holds a chunk until
    # the client's delayed ACK (~40 ms) for the one before, as real servers never do.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def before_last_write(self) -> None:
        """Hook: runs just before the last bytes of a response are written."""

    def read_json(self) -> dict[str, Any] | None:
        """The request body as a JSON object, or ``None`` after answering 400."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as exc:
            self.send_json(400, error_body(400, f"invalid JSON body: {exc}"))
            return None
        return body

    def start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def event(self, data: dict[str, Any]) -> None:
        """One ``data:`` event of the stream."""
        self.chunk(b"data: " + json.dumps(data).encode() + b"\n\n")

    def chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except OSError as exc:
            raise ClientGone(str(exc)) from exc

    def end_stream(self, *, done: bool = True) -> None:
        """Finish the stream (``data: [DONE]`` first unless ``done`` is false)."""
        if done:
            self.chunk(b"data: [DONE]\n\n")
        self.before_last_write()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def cut(self) -> None:
        """Drop the connection mid-body, as a crashed upstream would."""
        self.before_last_write()
        self.wfile.flush()
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.send_raw(status, json.dumps(body).encode(), "application/json", headers)

    def send_raw(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.before_last_write()
        self.wfile.write(data)
        self.wfile.flush()

    def client_gone(self) -> bool:
        """Whether the client has closed its side (checked without blocking). ``poll``, not
        ``select``: a process with more than 1,024 open files gets descriptors ``select``
        cannot watch."""
        poller = select.poll()
        poller.register(self.connection, select.POLLIN)
        if not poller.poll(0):
            return False
        try:
            return not self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True

    def wait(self, seconds: float, stopping: threading.Event | None = None) -> None:
        """Sleep ``seconds`` but raise ClientGone at once if the client hangs up."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if stopping is not None and stopping.is_set():
                raise ClientGone("server stopping")
            if self.client_gone():
                raise ClientGone("client closed the connection")
            time.sleep(min(remaining, POLL_SECONDS))
