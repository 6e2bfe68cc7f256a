"""Fixtures of the workflow tools' tests: a small HTTP server and a small MCP server, each
started by the test on a free loopback port and stopped at its end, and a way to run a
capability the way a workflow does (its own event loop, the test's database connection)."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import pytest
from asgiref.sync import async_to_sync

from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall


class _Handler(BaseHTTPRequestHandler):
    """``/api/echo`` (the request as JSON), ``/api/text``, ``/api/bytes?n=`` (n bytes of
    text, no length declared), ``/api/status/<code>``, ``/api/redirect``, ``/api/slow``
    (answers when the test ends), ``/api/image``; anything else 404."""

    server: _Server

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, kind: str, length: bool = True, **headers):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if length:
            self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _answer(self, method: str) -> None:
        parts = urlsplit(self.path)
        self.server.seen.append((method, parts.path))
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size).decode() if size else ""
        if parts.path.startswith("/api/echo"):
            echo = {"method": method, "path": parts.path, "query": dict(parse_qsl(parts.query)),
                    "body": json.loads(body) if body else None,
                    "authorization": self.headers.get("Authorization"),
                    "x_key": self.headers.get("X-Key")}  # fmt: skip
            self._send(200, json.dumps(echo).encode(), "application/json")
        elif parts.path == "/api/text":
            self._send(200, b"The gate opens at dawn.", "text/plain; charset=utf-8")
        elif parts.path == "/api/bytes":
            n = int(dict(parse_qsl(parts.query)).get("n", "0"))
            self.close_connection = True
            self._send(200, b"x" * n, "text/plain", length=False)
        elif parts.path.startswith("/api/status/"):
            self._send(int(parts.path.rsplit("/", 1)[1]), b"{}", "application/json")
        elif parts.path == "/api/redirect":
            self._send(302, b"", "text/plain", Location="/api/echo")
        elif parts.path == "/api/slow":
            self.server.release.wait(30)
            self._send(200, b"late", "text/plain")
        elif parts.path == "/api/image":
            self._send(200, b"\x89PNG....", "image/png")
        else:
            self._send(404, b"no", "text/plain")

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str, str]] = []
        self.release = threading.Event()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def http_server():
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


def run_capability(name: str, tenant, node_input, *, query: str = "", dependencies=None,
                   cancel_after: float | None = None):  # fmt: skip
    """Build ``name`` for a run of ``tenant`` and execute one node with ``node_input``, in
    an event loop of its own whose database reads come back to this thread (the test's
    transaction), as a workflow run's do; ``cancel_after`` seconds, the run is cancelled."""
    scope = registry.RunScope(tenant_id=tenant.pk, conversation_id=None, scenario_id=None,
                              player_id=None)  # fmt: skip
    capability = registry.build(name, scope)
    call = CapabilityCall("n1", node_input, query, dependencies or {})

    async def run():
        cancel = asyncio.Event()
        if cancel_after is not None:
            asyncio.get_running_loop().call_later(cancel_after, cancel.set)
        return await capability.execute(call, cancel)

    return async_to_sync(run)()


class McpTestServer:
    """A small MCP server (the ``mcp`` package's ``MCPServer``, streamable HTTP) under
    uvicorn in a thread, on a free loopback port: ``gate_rule`` (takes the turn's query),
    ``scene`` (takes the dependencies), ``secret`` (never allowed), ``boom`` (fails) and
    ``slow`` (answers after 30 s). ``calls`` records what each tool received."""

    def __init__(self) -> None:
        import socket

        import uvicorn
        from mcp.server.mcpserver import MCPServer

        self.calls: list[tuple[str, dict]] = []
        mcp = MCPServer("gate-rules", log_level="WARNING")

        @mcp.tool()
        def gate_rule(location: str, query: str = "") -> str:
            """The rule at a location."""
            self.calls.append(("gate_rule", {"location": location, "query": query}))
            return f"At the {location}: a written pass is needed; a key is not a pass."

        @mcp.tool()
        def scene(dependencies: dict, note: str = "") -> str:
            """A scene requirement from what earlier nodes found."""
            self.calls.append(("scene", {"dependencies": dependencies, "note": note}))
            rule = dependencies.get("rule", {}).get("value", {}).get("text", "")
            return f"The guard checks for a pass. {rule}"

        @mcp.tool()
        def secret() -> str:
            self.calls.append(("secret", {}))
            return "the vault code"

        @mcp.tool()
        def boom() -> str:
            raise ValueError("the rule book is on fire")

        @mcp.tool()
        async def slow() -> str:
            import anyio

            await anyio.sleep(30)
            return "late"

        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        app = mcp.streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> McpTestServer:
        import time

        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test MCP server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(15)
        self._socket.close()


@pytest.fixture
def mcp_server():
    server = McpTestServer().start()
    try:
        yield server
    finally:
        server.stop()
