"""The embedded Redis is shared: processes starting at the same instant use one server, and
the last one to leave stops it (a fresh data directory, so nothing else is using it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

BASE_DIR = Path(__file__).resolve().parents[2]
USER = """
import sys, time
from console import embedded
print(embedded.redis_url(), flush=True)
time.sleep(1.5)  # all of them hold the server at once
"""


def servers_on(socket_path: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if socket_path in cmdline and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def test_simultaneous_starters_share_one_server_and_the_last_stops_it(tmp_path):
    env = {**os.environ, "ROLEPLAY_VAR_DIR": str(tmp_path)}
    users = [
        subprocess.Popen(
            [sys.executable, "-c", USER],
            cwd=BASE_DIR,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    urls = {user.communicate(timeout=60)[0].strip() for user in users}
    assert all(user.returncode == 0 for user in users)
    assert len(urls) == 1, urls  # one server for all four
    socket_path = urls.pop().removeprefix("unix://")
    deadline = time.monotonic() + 10
    while servers_on(socket_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not servers_on(socket_path)  # stopped with its last user
