"""The connection pool's check before it hands out a connection, paid only when it can find
something.

psycopg's own check (``ConnectionPool.check_connection``) is a round trip on every
checkout, and every unit of database work of a turn checks a connection out
(``console.db.run_db``): on the path to the first delta that is a wasted round trip, since
the connection worked a moment ago. A server that went away (a restart, a terminated
backend, an idle timeout) closes the socket, usually after a last error message, so the
socket has something to read; a connection in use has nothing to read between statements.
So the round trip is made only when the socket is readable, or when the connection has not
been handed out for :data:`QUIET_S` seconds (a server that vanished without closing
anything, a long idle spell); otherwise the connection is handed out as it is.
"""

from __future__ import annotations

import select
import time

from psycopg_pool import ConnectionPool

# A connection handed out less than this long ago is trusted unless its socket has news.
QUIET_S = 5.0


def check(conn) -> None:
    """psycopg_pool's ``check``: raise if ``conn`` does not work (the pool replaces it)."""
    now = time.monotonic()
    recent = now - getattr(conn, "_handed_out_at", float("-inf")) < QUIET_S
    if not recent or _has_news(conn):
        ConnectionPool.check_connection(conn)
    conn._handed_out_at = now


def _has_news(conn) -> bool:
    """Whether the server sent something (or closed the socket) since the last statement."""
    try:
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN | select.POLLPRI)
        return bool(poller.poll(0))
    except (OSError, ValueError):  # a closed connection has no socket: let the check fail it
        return True
