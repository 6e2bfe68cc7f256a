"""The benchmark's scripted model server, in a process of its own.

In the benchmark's own process the model server's threads would share one interpreter lock
with the 50 players' event loop, and the time a request waits for that lock before the
server even reads it would be billed to the product as harness overhead. Here it runs alone:
``python -m roleplay.bench.model_process`` prints its base URL, then answers one command per
line on stdin (``timings``, ``clear``) with one JSON line on stdout, and exits at EOF.
With ``--agentic`` it also answers Agent V2's roles by model name (``roleplay.bench.agentic``),
with ``--story`` Story's JSON-schema calls (``roleplay.bench.story_models``);
the Actor's requests get the same fixed reply either way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict

from console.processes import spawn
from roleplay.bench.players import last_user_message
from roleplay.llm.scripted_server import RequestTiming


def _last_user(request: dict) -> list[dict]:
    """Only what the benchmark matches a request by, not its whole history."""
    last = last_user_message(request)
    return [last] if last else []


def serve(agentic: bool = False, story: bool = False) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    django.setup()
    from roleplay.bench.agentic import agentic_reply
    from roleplay.bench.story_models import story_reply
    from roleplay.bench.workload import bench_reply
    from roleplay.llm.scripted_server import ScriptedOpenAIServer

    sys.setswitchinterval(0.001)  # many handler threads, each holding the lock briefly
    default = story_reply() if story else agentic_reply() if agentic else bench_reply()
    with ScriptedOpenAIServer(default=default) as server:
        print(server.base_url, flush=True)
        for line in sys.stdin:
            command = line.strip()
            if command == "clear":
                server.clear()
                answer: object = "ok"
            elif command == "timings":
                answer = [
                    {**asdict(t), "request": {"messages": _last_user(t.request)}}
                    for t in server.request_timings
                ]
            else:
                answer = {"error": f"unknown command {command!r}"}
            print(json.dumps(answer), flush=True)


class ModelServerProcess:
    """The parent's handle: ``base_url``, ``clear()``, ``request_timings``; a context manager.
    ``agentic=True``: the server answers Agent V2's roles too (see the module docstring)."""

    def __init__(self, *, agentic: bool = False, story: bool = False) -> None:
        self.process = spawn(
            [sys.executable, "-m", "roleplay.bench.model_process"]
            + (["--agentic"] if agentic else [])
            + (["--story"] if story else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "LOG_LEVEL": "WARNING"},
        )
        self.base_url = self._read_line()

    def _read_line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the model server process exited")
        return line.strip()

    def _ask(self, command: str) -> object:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return json.loads(self._read_line())

    def clear(self) -> None:
        self._ask("clear")

    @property
    def request_timings(self) -> list[RequestTiming]:
        answer = self._ask("timings")
        assert isinstance(answer, list)
        return [RequestTiming(**item) for item in answer]

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def __enter__(self) -> ModelServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    serve(agentic="--agentic" in sys.argv[1:], story="--story" in sys.argv[1:])
