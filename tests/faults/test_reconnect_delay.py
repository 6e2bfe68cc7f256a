"""The connection pool notices a restarted database within two seconds, however long it
was down: its retry delay is capped (``console.db.cap_reconnect_delay``, applied at start)."""

from psycopg_pool.base import AttemptWithBackoff

from console.db import RECONNECT_DELAY_MAX_S, cap_reconnect_delay


def test_the_retry_delay_stops_doubling_at_the_cap():
    cap_reconnect_delay()  # idempotent: the app has applied it already
    attempt = AttemptWithBackoff(timeout=300)
    delays = []
    for step in range(10):
        attempt.update_delay(now=float(step))
        delays.append(attempt.delay)
    assert delays[0] < 1.2  # the pool's own first delay, about a second
    assert max(delays) == RECONNECT_DELAY_MAX_S
    assert delays[-1] == RECONNECT_DELAY_MAX_S  # without the cap: 2**9 s


def test_the_cap_still_gives_up_at_the_pools_deadline():
    attempt = AttemptWithBackoff(timeout=3)
    attempt.update_delay(now=0.0)
    attempt.update_delay(now=2.5)
    assert attempt.delay <= 0.5 + 1e-9
    assert attempt.time_to_give_up(now=3.0)
