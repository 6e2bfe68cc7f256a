"""Start, watch and restart the local model process, and find it from any process.

A process that uses the local model calls :meth:`LocalModelService.endpoint`: it starts a
supervisor for that model unless one runs, counts itself as a user, and gets the base URL
of the model's OpenAI-compatible server. The supervisor
(``python -m roleplay.llm.local_supervisor DIR``) starts the model process
(``local_server``), tied to its own life, and starts it again whenever it exits — a native
crash, SIGKILL, SIGILL — after a short backoff, on the same port. It exits, taking the
model process with it, once none of its users is alive, so a killed ``make run`` or test run
leaves no model behind.

State lives in ``<run dir>/model/<key>/`` (the run dir of ``console.embedded``, private to a
test run): ``spec.json`` (what to load), ``endpoint.json`` (URL, pids, restarts), the users
file, locks and logs.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from console.embedded import Users, exclusive, run_dir
from console.processes import spawn

GRACE_SECONDS = 5.0  # a supervisor with no live user for this long exits
POLL_SECONDS = 0.2
MAX_BACKOFF = 10.0
STABLE_SECONDS = 30.0  # a model process that lived this long resets the backoff


@dataclass(frozen=True)
class ModelSpec:
    """What the model process loads: a GGUF ``path`` ("" = the bundled model), and its
    prompt cache (``cache_mb`` of memory; ``caching`` False: none at all)."""

    path: str
    ctx: int
    threads: int
    name: str
    cache_mb: int = 0
    caching: bool = True

    def key(self) -> str:
        return hashlib.sha1(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]


class LocalModelService:
    """The client side: where the model process of ``spec`` listens, starting it if needed."""

    def __init__(self, spec: ModelSpec, root: Path | None = None) -> None:
        self.spec = spec
        self.directory = (root or run_dir() / "model") / spec.key()
        self.users = Users(self.directory / "users")

    def endpoint(self) -> str:
        """The model server's base URL (``http://127.0.0.1:PORT/v1``); blocking."""
        with exclusive(self.directory / "start.lock"):
            if not supervisor_running(self.directory):
                self._start_supervisor()
            with exclusive(self.directory / "users.lock"):
                self.users.join(os.getpid())
        return self.state()["url"]

    def state(self) -> dict:
        """``endpoint.json``: url, supervisor and model pids, restarts, last exit status."""
        return json.loads((self.directory / "endpoint.json").read_text())

    def healthy(self, timeout: float = 1.0) -> bool:
        """Whether the model process answers its health check now."""
        try:
            url = self.state()["url"].removesuffix("/v1") + "/health"
            with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310
                return response.status == 200
        except (OSError, ValueError, KeyError):
            return False

    def _start_supervisor(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "endpoint.json").unlink(missing_ok=True)
        (self.directory / "spec.json").write_text(json.dumps(asdict(self.spec)))
        log = open(self.directory / "supervisor.log", "a")  # noqa: SIM115 - the child keeps it
        subprocess.Popen(
            [sys.executable, "-m", "roleplay.llm.local_supervisor", str(self.directory)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # it decides its own end, from its users' lives
        )
        log.close()
        deadline = time.monotonic() + 30
        while not (self.directory / "endpoint.json").exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the model supervisor did not start; see {log.name}")
            time.sleep(0.02)


def supervisor_running(directory: Path) -> bool:
    """Whether a supervisor holds ``directory``'s lock (probed without blocking)."""
    path = directory / "supervisor.lock"
    if not path.exists():
        return False
    with open(path, "a") as probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Supervisor:
    """The supervisor process's loop (one per model directory)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.spec = ModelSpec(**json.loads((directory / "spec.json").read_text()))
        self.users = Users(directory / "users")
        self.port = _free_port()
        self.restarts = 0
        self.last_exit: int | None = None
        self.child: subprocess.Popen | None = None
        self.stopping = False

    def publish(self) -> None:
        state = {
            "url": f"http://127.0.0.1:{self.port}/v1",
            "supervisor": os.getpid(),
            "model_pid": self.child.pid if self.child else None,
            "restarts": self.restarts,
            "last_exit": self.last_exit,
            "model": self.spec.name,
        }
        scratch = self.directory / "endpoint.json.tmp"
        scratch.write_text(json.dumps(state))
        os.replace(scratch, self.directory / "endpoint.json")

    def start_model(self) -> None:
        path = self.spec.path or str(_bundled_path())
        log = open(self.directory / "model.log", "a")  # noqa: SIM115 - the child keeps it
        self.child = spawn(
            [
                sys.executable,
                "-m",
                "roleplay.llm.local_server",
                "--port",
                str(self.port),
                "--model",
                path,
                "--name",
                self.spec.name,
                "--ctx",
                str(self.spec.ctx),
                "--threads",
                str(self.spec.threads),
                "--cache-mb",
                str(self.spec.cache_mb),
                *([] if self.spec.caching else ["--no-cache"]),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.publish()

    def users_alive(self) -> bool:
        with exclusive(self.directory / "users.lock"):
            return bool(self.users.live())

    def run(self) -> None:
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "stopping", True))
        signal.signal(signal.SIGINT, lambda *_: setattr(self, "stopping", True))
        self.publish()
        backoff, started, idle_since = 0.25, time.monotonic(), None
        try:
            while not self.stopping:
                if self.child is None or self.child.poll() is not None:
                    if self.child is not None:
                        self.last_exit = self.child.returncode
                        self.restarts += 1
                        lived = time.monotonic() - started
                        backoff = 0.5 if lived > STABLE_SECONDS else min(backoff * 2, MAX_BACKOFF)
                        print(f"model process exited ({self.last_exit}); restarting", flush=True)
                        time.sleep(backoff if lived < STABLE_SECONDS else 0)
                    self.start_model()
                    started = time.monotonic()
                if self.users_alive():
                    idle_since = None
                elif idle_since is None:
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since > GRACE_SECONDS:
                    break
                time.sleep(POLL_SECONDS)
        finally:
            if self.child is not None and self.child.poll() is None:
                self.child.terminate()
                try:
                    self.child.wait(10)
                except subprocess.TimeoutExpired:
                    self.child.kill()


def _bundled_path() -> Path:
    from .bundled import bundled_model_path

    return bundled_model_path()


def main(directory: str) -> int:
    path = Path(directory)
    with open(path / "supervisor.lock", "a") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another supervisor runs this model
        Supervisor(path).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
