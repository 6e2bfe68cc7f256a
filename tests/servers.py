"""The servers a test run uses, started when the first test needs them.

PostgreSQL is the product's embedded server (shared with a ``make run``, in a database of
the run's own); Redis is a private server in the run's directory (``tests/settings.py``).
Both count this process as a user, so a killed run's janitor stops what nobody else uses,
and the test databases of runs that died are dropped by the next run.
"""

from __future__ import annotations

import atexit
import os
import shutil
from functools import lru_cache

from django.conf import settings

from console import embedded
from tests import settings as test_settings


@lru_cache(maxsize=1)
def start() -> None:
    """Start or join the run's servers once per process."""
    run_dir = embedded.run_dir()
    if run_dir.name.startswith(test_settings.RUN_PREFIX):
        atexit.register(shutil.rmtree, run_dir, True)  # runs after the servers are left
    if test_settings.EMBEDDED_DATABASE:
        url = embedded.database_url()
        if url != settings.DATABASE_URL:
            raise RuntimeError(
                f"the embedded PostgreSQL listens at {url}, not at {settings.DATABASE_URL}; "
                "set ROLEPLAY_VAR_DIR to a shorter path"
            )
    if test_settings.EMBEDDED_REDIS:
        embedded.redis().join()
    drop_dead_runs_databases()


def drop_dead_runs_databases() -> None:
    """Drop ``test_roleplay_<pid>`` databases whose run is gone (killed before its end)."""
    import psycopg

    params = settings.DATABASES["default"]
    conninfo = {
        "dbname": "postgres",
        "user": params.get("USER") or None,
        "password": params.get("PASSWORD") or None,
        "host": params.get("HOST") or None,
        "port": params.get("PORT") or None,
    }
    with psycopg.connect(**{k: v for k, v in conninfo.items() if v}, autocommit=True) as conn:
        names = [
            row[0]
            for row in conn.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s",
                (test_settings.TEST_DATABASE_PREFIX + "%",),
            )
        ]
        for name in names:
            # test_roleplay_<pid>, or test_roleplay_<pid>_gw0 for a pytest-xdist worker
            pid = name.removeprefix(test_settings.TEST_DATABASE_PREFIX).split("_")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not embedded.pid_alive(int(pid)):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
