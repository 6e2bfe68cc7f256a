"""Child processes that die with the process that started them.

``make run`` and the test run start daphne, Celery workers and the model process as
children. If the parent is killed outright (SIGKILL, an OOM kill, a native crash) it runs no
cleanup, so each child asks the kernel to kill it when its parent goes
(``PR_SET_PDEATHSIG``). The kernel sends that signal when the *thread* that forked the child
ends, so :func:`spawn` must be called from a thread that lives as long as the process (the
main thread, in practice).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
from collections.abc import Sequence
from typing import Any

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Runs in the child between fork and exec (or after a fork without exec)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def forks_die_with_this_process() -> None:
    """Every process this one forks from now on (without exec: a Celery worker's pool
    processes and its beat scheduler) is killed when this process dies.

    ``spawn`` ties the worker to its launcher, but a process the worker forks is tied to
    nobody: after ``kill -9`` of ``make run`` the worker went with it and one of its forks
    was left running under init, still taking tasks beside the next ``make run``. Forks are
    made by the worker's main thread, which lives as long as the worker."""
    parent = os.getpid()

    def remember_parent() -> None:
        nonlocal parent
        parent = os.getpid()

    os.register_at_fork(before=remember_parent, after_in_child=lambda: _die_with_parent(parent))


def spawn(args: Sequence[str], **popen: Any) -> subprocess.Popen:
    """``subprocess.Popen(args, **popen)`` for a child killed when this process dies.

    Called from another thread than the main one, the tie would be to that thread's life;
    then the child is started without it and the caller must stop it itself."""
    parent = os.getpid()
    if threading.current_thread() is threading.main_thread():
        popen.setdefault("preexec_fn", lambda: _die_with_parent(parent))
    return subprocess.Popen(list(args), **popen)


def stop(process: subprocess.Popen, *, timeout: float = 15.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; waits for the exit either way."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
