"""Agent V2's test fixtures: the relay of the planning runs' outbox, in this process."""

from __future__ import annotations

import pytest


@pytest.fixture
def planning_relay(celery_worker):
    """A relay (``roleplay.agentic.relay``) running beside the test, sending the task of
    every planning run a turn commits to the session's worker; stopped (its connections
    closed) before the test's database is flushed."""
    from roleplay.agentic.relay import Relay

    relay = Relay(poll_s=0.5).start()
    try:
        yield relay
    finally:
        relay.stop()
