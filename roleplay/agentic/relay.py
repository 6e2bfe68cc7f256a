"""The relay of Agent V2's outbox: sends the task of every planning run a turn recorded.

A turn writes its planning run in the transaction that commits its reply and sends nothing
(``services.planning.start``): no INSERT of its own beside the Actor and no broker round
trip on its path. The relay, a thread of each Celery worker's main process (started by the
worker's entry point, ``console.worker``), sends the tasks:

- it LISTENs on :data:`CHANNEL`, which an INSERT into the runs' table notifies when it
  commits (a trigger, migration ``0017``), and at least every :data:`POLL_S` seconds it
  looks anyway (a notification lost while it reconnected);
- each look is ``planning.dispatch_pending``: the committed runs not sent yet, taken ``FOR
  UPDATE SKIP LOCKED`` and marked sent in one transaction, so several workers' relays never
  send one twice, and the task then goes out. A run is only ever seen once its turn has
  committed.

Nothing is lost: the outbox is the runs' table. Runs recorded while no relay ran are sent
when one starts; a relay killed between marking a run and sending its task leaves it to the
minute's ``requeue_planning_runs`` sweep, which sends again what was sent and never started.
The task itself is idempotent (``planning.execute``: a run done is skipped, the first close
wins), so a run sent twice still commits once. ``PLANNING_RELAY=0`` (a test run's workers)
keeps a worker's relay off.
"""

from __future__ import annotations

import logging
import threading

import psycopg
from django.db import close_old_connections, connection

logger = logging.getLogger(__name__)

CHANNEL = "roleplay_planning_runs"
POLL_S = 2.0
RETRY_S = 2.0


class Relay:
    """The relay loop in a daemon thread: :meth:`start`, :meth:`stop`."""

    def __init__(self, poll_s: float = POLL_S) -> None:
        self.poll_s = poll_s
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Relay:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="planning-relay", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                with _listener() as listening:
                    while not self._stopping.is_set():
                        self.drain()
                        _wait(listening, self.poll_s)
            except Exception:  # the database or the broker is away: try again shortly
                logger.warning("the planning relay failed; retrying", exc_info=True)
                self._stopping.wait(RETRY_S)
            finally:
                connection.close()  # this thread's own Django connection

    def drain(self) -> int:
        """Send every run waiting now; how many."""
        from roleplay.agentic.services import planning

        sent = 0
        try:
            while True:
                batch = planning.dispatch_pending()
                sent += batch
                if batch < planning.RELAY_BATCH:
                    return sent
        finally:
            close_old_connections()


def _listener() -> psycopg.Connection:
    """A connection of its own (autocommit, as LISTEN needs), on Django's database."""
    params = connection.get_connection_params()
    listening = psycopg.connect(**params, autocommit=True)
    listening.execute(f"LISTEN {CHANNEL}")
    return listening


def _wait(listening: psycopg.Connection, timeout: float) -> None:
    """Until a notification comes (all that came meanwhile with it) or ``timeout``."""
    for _ in listening.notifies(timeout=timeout, stop_after=1):
        pass


RELAY = Relay()


def attach_to_worker() -> None:
    """Run :data:`RELAY` while this process is a ready Celery worker (unless
    ``settings.PLANNING_RELAY`` is off)."""
    from celery.signals import worker_ready, worker_shutdown

    def started(**_) -> None:
        from django.conf import settings

        if settings.PLANNING_RELAY:
            RELAY.start()

    def stopping(**_) -> None:
        RELAY.stop()

    worker_ready.connect(started, weak=False, dispatch_uid="roleplay.planning_relay.start")
    worker_shutdown.connect(stopping, weak=False, dispatch_uid="roleplay.planning_relay.stop")
