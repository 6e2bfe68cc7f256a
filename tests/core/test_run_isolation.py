"""A test run is isolated from a ``make run`` on the same machine and from other test runs:
its own Redis (so no shared broker or channel-layer key space), runtime directory and test
database; and when it is killed outright, nothing it started stays behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from celery import Celery
from django.conf import settings
from django.db import connection

from console import embedded
from tests import servers
from tests.background.processes import start_worker

REPO = Path(settings.BASE_DIR)


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.mark.django_db(transaction=True)
def test_a_killed_test_run_leaves_no_process_behind(tmp_path):
    out = tmp_path / "probe.json"
    env = {**os.environ, "PROBE_OUT": str(out)}
    for name in ("ROLEPLAY_RUN_DIR", "REDIS_URL", "TEST_DATABASE_NAME"):
        env.pop(name, None)  # the probe run names its own
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/core/probe_killed_run.py"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not out.exists():
            assert run.poll() is None, "the probe run ended before it was ready"
            assert time.monotonic() < deadline, "the probe run never got ready"
            time.sleep(0.2)
        facts = json.loads(out.read_text())
        assert facts["pytest"] == run.pid
        os.killpg(run.pid, signal.SIGKILL)  # the run and its whole process group, no cleanup
        run.wait()
        pids = {name: pid for name, pid in facts.items() if name != "database"}
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in pids.values()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [name for name, pid in pids.items() if alive(pid)]
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    servers.drop_dead_runs_databases()  # what the next run does first
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (facts["database"],))
        assert cursor.fetchone() is None


def test_the_run_has_its_own_redis_and_database():
    product = embedded.EmbeddedRedis(embedded.VAR_DIR / "redis")
    assert settings.REDIS_URL != product.url()
    assert settings.CELERY_BROKER_URL.endswith(str(embedded.run_dir() / "redis" / "redis.sock"))
    name = os.environ.get("TEST_DATABASE_NAME") or f"test_roleplay_{os.getpid()}"
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # pytest-django names a worker's database
    if worker:
        name = f"{name}_{worker}"
    assert settings.DATABASES["default"]["TEST"]["NAME"] == name != "test_roleplay"


@pytest.mark.django_db(transaction=True)
def test_a_make_run_broker_never_sees_a_test_worker(tmp_path):
    """A product broker (a Redis of its own, as ``make run`` has) gets no answer from this
    run's worker, which answers on the run's own broker."""
    directory = Path(tempfile.mkdtemp(prefix="rp-redis-"))
    product = embedded.EmbeddedRedis(directory / "redis")
    worker = start_worker(tmp_path)
    try:
        product_url = product.join().replace("unix://", "redis+socket://", 1)
        product_app = Celery(
            "product", broker=product_url, backend=product_url, set_as_current=False
        )
        from console.celery import app

        assert app.control.ping(destination=[worker.hostname], timeout=2.0)
        assert product_app.control.ping(timeout=2.0) == []
    finally:
        worker.stop()
        product.leave()
        shutil.rmtree(directory, ignore_errors=True)
