"""The pool's check before a checkout (``console.pool_check``): a connection handed out a
moment ago with nothing on its socket goes out without a round trip; one the server closed,
or one unused for a while, is checked, and a dead one is refused (the pool replaces it)."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

from console import pool_check


@pytest.fixture
def raw(db):
    """A connection of its own to the test database, and a second to act as the server."""
    params = connection.get_connection_params()
    params.pop("pool", None)
    params.pop("prepare_threshold", None)
    conn = psycopg.connect(**params, autocommit=True)
    admin = psycopg.connect(**params, autocommit=True)
    yield conn, admin
    conn.close()
    admin.close()


def statements(admin, pid: int) -> int:
    """How many statements the backend ``pid`` has been sent (its last one's start time)."""
    row = admin.execute("SELECT query_start FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
    return row[0]


def test_a_connection_in_use_goes_out_without_a_round_trip(raw):
    conn, admin = raw
    conn.execute("SELECT 1")
    pool_check.check(conn)  # never handed out before: checked
    started = statements(admin, conn.info.backend_pid)
    pool_check.check(conn)
    pool_check.check(conn)
    assert statements(admin, conn.info.backend_pid) == started


def test_a_connection_unused_for_a_while_is_checked(raw, monkeypatch):
    conn, admin = raw
    pool_check.check(conn)
    started = statements(admin, conn.info.backend_pid)
    monkeypatch.setattr(pool_check, "QUIET_S", 0.0)
    pool_check.check(conn)
    assert statements(admin, conn.info.backend_pid) > started


def test_a_connection_the_server_closed_is_refused(raw):
    conn, admin = raw
    pool_check.check(conn)  # handed out a moment ago
    admin.execute("SELECT pg_terminate_backend(%s)", [conn.info.backend_pid])
    admin.execute("SELECT pg_sleep(0.2)")  # the server's goodbye reaches the socket
    with pytest.raises(psycopg.OperationalError):
        pool_check.check(conn)


def test_the_pool_checks_with_it():
    assert connection.pool is not None
    assert connection.pool._check is pool_check.check
