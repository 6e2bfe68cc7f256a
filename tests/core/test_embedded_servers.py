"""The embedded servers are shared: processes starting at the same instant use one server
each, the last one to leave stops it, and when the users are killed outright (no exit
handler runs) the janitor stops it (fresh data directories, so nothing else is using them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

BASE_DIR = Path(__file__).resolve().parents[2]
USER = """
import sys, time
from console import embedded
print(getattr(embedded, sys.argv[1])(), flush=True)
time.sleep(1.5)  # all of them hold the server at once
"""


def servers_on(socket_path: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if socket_path in cmdline and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


@pytest.fixture
def var_dir():
    """A fresh data directory, not under pytest's base directory: pytest keeps that private
    to root, and the embedded PostgreSQL runs as another user."""
    directory = Path(tempfile.mkdtemp(prefix="rp-var-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def user_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "ROLEPLAY_VAR_DIR": str(tmp_path)}
    for name in ("DATABASE_URL", "REDIS_URL", "ROLEPLAY_RUN_DIR"):
        env.pop(name, None)
    return env


def start_users(tmp_path: Path, url_function: str, count: int = 4) -> set[str]:
    """``count`` processes asking for the server at once; the URLs they were given."""
    env = user_env(tmp_path)
    users = [
        subprocess.Popen(
            [sys.executable, "-c", USER, url_function],
            cwd=BASE_DIR,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    urls = {user.communicate(timeout=120)[0].strip() for user in users}
    assert all(user.returncode == 0 for user in users)
    return urls


def wait_until_gone(marker: str) -> bool:
    deadline = time.monotonic() + 15
    while servers_on(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not servers_on(marker)


def test_simultaneous_redis_users_share_one_server_and_the_last_stops_it(var_dir):
    urls = start_users(var_dir, "redis_url")
    assert len(urls) == 1, urls  # one server for all four
    assert wait_until_gone(urls.pop().removeprefix("unix://"))


def test_simultaneous_postgres_users_share_one_server_and_the_last_stops_it(var_dir):
    urls = start_users(var_dir, "database_url")  # a fresh data directory: initdb included
    assert len(urls) == 1, urls
    assert wait_until_gone(str(var_dir / "pgdata"))


KILLED_USER = """
import sys, time
from console import embedded
embedded.ensure_environment()
import os
print(os.environ["DATABASE_URL"], os.environ["REDIS_URL"], flush=True)
time.sleep(600)
"""


def test_servers_of_a_killed_process_are_stopped_by_the_janitor(var_dir):
    user = subprocess.Popen(
        [sys.executable, "-c", KILLED_USER],
        cwd=BASE_DIR,
        env=user_env(var_dir),
        stdout=subprocess.PIPE,
        text=True,
    )
    database, redis = user.stdout.readline().split()
    assert servers_on(str(var_dir / "pgdata")) and servers_on(redis.removeprefix("unix://"))
    user.kill()  # no atexit handler runs
    user.wait()
    assert wait_until_gone(redis.removeprefix("unix://"))
    assert wait_until_gone(str(var_dir / "pgdata"))
    assert "postgres" in database
