"""The launcher of ``make run`` killed outright (``kill -9``): every process it started, and
every process those started, goes with it. A Celery worker forks its pool processes and its
beat scheduler itself; one of them left running, reparented to init, would keep consuming
tasks beside the next ``make run``.

The launcher here is the smallest one that starts the worker the way ``manage.py serve``
does: ``console.processes.spawn`` of ``serve``'s own worker command, from the main thread.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from console.live_server import worker_env

LAUNCHER = """
import sys, time
from pathlib import Path
from console.management.commands.serve import worker_command
from console.processes import spawn
spawn(worker_command(Path(sys.argv[1]), "--hostname", sys.argv[2], "--queues", sys.argv[3]))
time.sleep(3600)
"""


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            tree.setdefault(parent, []).append(int(entry.name))
    return tree


def descendants(pid: int) -> set[int]:
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.django_db(transaction=True)
def test_every_process_of_the_worker_dies_with_the_launcher(tmp_path):
    token = uuid.uuid4().hex[:10]
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(tmp_path / "beat-schedule"),
         f"tests-{token}@localhost", f"tests-{token}"],
        cwd=settings.BASE_DIR, env=worker_env(), stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "launcher.log").open("w"),
    )  # fmt: skip
    tree: set[int] = set()
    try:
        # The worker, its two pool processes and its beat process.
        wait_for(lambda: len(descendants(launcher.pid)) >= 4, 120, "the worker's pool and beat")
        time.sleep(1)  # the pool settles (a fork after the count would escape it)
        tree = descendants(launcher.pid)
        os.kill(launcher.pid, signal.SIGKILL)
        launcher.wait()
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in tree) and time.monotonic() < deadline:
            time.sleep(0.2)
        survivors = [pid for pid in tree if alive(pid)]
        cmdlines = [Path(f"/proc/{p}/cmdline").read_bytes()[:120] for p in survivors]
        assert not survivors, f"{len(survivors)} of {len(tree)} survived: {cmdlines}"
    finally:
        for pid in descendants(launcher.pid) | tree:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
