"""Run the real ASGI app in a daphne subprocess on a free 127.0.0.1 port.

Benchmarks and browser tests need a server speaking HTTP and WebSocket in another process,
like production, but on the database this process uses (the test database under pytest).
The child gets its database and Redis as URLs, so it never starts embedded servers of its
own, and this process's ``SECRET_KEY`` so that tickets signed here verify there.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from console.processes import spawn

BASE_DIR = Path(__file__).resolve().parent.parent
DEFAULT_APP = "console.asgi:application"


class LiveServerError(RuntimeError):
    """The daphne child did not come up; the message carries the tail of its log."""


def worker_env() -> dict[str, str]:
    """The environment of a child process (a Celery worker, a management command) that
    uses this process's database and Redis: ``DATABASE_URL`` from the live connection, so a
    test run's child works on the test database."""
    from django.conf import settings
    from django.db import connection

    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url_for(connection.settings_dict),
        REDIS_URL=settings.REDIS_URL,
        DJANGO_SETTINGS_MODULE="console.settings",
        PYTHONUNBUFFERED="1",
    )
    return env


def database_url_for(settings_dict: dict) -> str:
    """A ``DATABASE_URL`` for a Django connection's ``settings_dict``.

    A HOST that is a directory is a unix socket directory (the embedded server's case) and
    goes into the query string, the form ``console.settings`` understands.
    """
    user = quote(settings_dict.get("USER") or "", safe="")
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{quote(password, safe='')}@" if password else (f"{user}@" if user else "")
    name = quote(settings_dict["NAME"], safe="")
    host = settings_dict.get("HOST") or ""
    port = str(settings_dict.get("PORT") or "")
    if host.startswith("/"):
        query = f"?host={quote(host, safe='/')}" + (f"&port={port}" if port else "")
        return f"postgres://{auth}/{name}{query}"
    netloc = host + (f":{port}" if port else "")
    return f"postgres://{auth}{netloc}/{name}"


def free_port() -> int:
    """A port free right now on 127.0.0.1 (``start_daphne`` retries if it gets taken)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveServer:
    """A running daphne child: ``url`` is ``http://127.0.0.1:<port>``."""

    process: subprocess.Popen
    port: int
    log_path: Path
    _log: object = field(repr=False, default=None)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        """User + system CPU the daphne child used so far (load-independent cost)."""
        import psutil

        try:
            times = psutil.Process(self.process.pid).cpu_times()
        except psutil.Error:
            return 0.0
        return times.user + times.system

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout``; only this child is signalled."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if self._log is not None:
            self._log.close()
            self._log = None
        try:
            self.log_path.unlink()
        except OSError:
            pass


def child_env(database_url: str, redis_url: str, extra: dict[str, str] | None = None) -> dict:
    from django.conf import settings

    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "console.settings",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECRET_KEY": settings.SECRET_KEY,
            "WS_TICKET_TTL_SECONDS": str(settings.WS_TICKET_TTL_SECONDS),
            "LOG_LEVEL": env.get("LIVE_SERVER_LOG_LEVEL", "WARNING"),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra or {})
    return env


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):  # noqa: S310 - our own 127.0.0.1 child
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer means the app is serving
    except (OSError, ValueError):
        return False


def start_daphne(
    database_url: str,
    redis_url: str,
    *,
    app: str = DEFAULT_APP,
    extra_env: dict[str, str] | None = None,
    probe_path: str = "/console/login/",
    timeout: float = 60.0,
    attempts: int = 3,
) -> LiveServer:
    """Start daphne serving ``app`` and wait until ``probe_path`` answers over HTTP."""
    env = child_env(database_url, redis_url, extra_env)
    last_error = ""
    for _ in range(attempts):
        port = free_port()
        log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed by LiveServer.stop
            prefix="daphne-", suffix=".log", delete=False
        )
        process = spawn(  # dies with this process, even when it is killed outright
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), app],
            cwd=BASE_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        server = LiveServer(process, port, Path(log.name), log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            if _answers(server.url + probe_path):
                return server
            time.sleep(0.1)
        last_error = server.log_tail()
        server.stop()
        if "Address already in use" not in last_error:
            break
    raise LiveServerError(f"daphne did not start serving {app}:\n{last_error}")


@contextmanager
def running_daphne(database_url: str, redis_url: str, **kwargs):
    """``with running_daphne(db_url, redis_url) as server: ...`` stops the child after."""
    server = start_daphne(database_url, redis_url, **kwargs)
    try:
        yield server
    finally:
        server.stop()
