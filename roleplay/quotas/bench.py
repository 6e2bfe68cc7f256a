"""Figures of the quota check (``bench_quota``): its cost per turn and its exactness.

- **Cost**: the admission (``admission.admit_player``: the plan's resolution and the day
  counter's conditional upsert, one statement) timed ``samples`` times on a player with a
  plan, inside a transaction as in a turn (the commit is the turn's own), p50/p95 in µs;
  also with a commit of its own (``check_with_own_commit_us``: what a disk flush adds);
  beside it, a ``SELECT 1`` round trip on the same connection
  as the baseline (the ratio says what the check costs beyond any statement), and the
  charge of a model call's tokens (``charging.charge``).
- **Exactness under concurrency**: ``players`` threads, released together, each admitting
  ``turns`` turns of its own player and charging ``tokens`` for each; then every counter is
  read back: an admission or a charge the counters miss is *lost*, one they hold twice is
  *double-counted* (goal: 0 and 0). Then the same threads race for one shared player whose
  plan allows ``shared_limit`` messages: exactly that many must get through.

Everything runs in a throwaway ``bench-`` tenant, deleted at the end.
"""

from __future__ import annotations

import threading
import time
import uuid
from contextlib import nullcontext

from django.db import close_old_connections, connection, transaction

from console.models import Player, Tenant
from memory.bench.stats import percentile

from . import services
from .admission import admit_player
from .charging import charge
from .errors import QuotaExceeded
from .models import QuotaCounter

GOAL = {"check_p50_us": 1000.0, "lost": 0, "double_counted": 0}


def _timed(call, samples: int, *, in_transaction: bool = True) -> list[float]:
    """µs of each of ``samples`` calls; ``in_transaction``: each inside a transaction whose
    commit is not timed, as in a turn (the admission runs in the turn's first transaction,
    the charge in its last: their commits are the turn's own, paid for its message)."""
    out = []
    for _ in range(samples):
        with transaction.atomic() if in_transaction else nullcontext():
            started = time.perf_counter()
            call()
            out.append((time.perf_counter() - started) * 1e6)
    return out


def _summary(values: list[float]) -> dict:
    return {"p50": percentile(values, 50), "p95": percentile(values, 95)}


def _race(count: int, work) -> list:
    """``work(i)`` in ``count`` threads released together; their results (or exceptions)."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            results[i] = work(i)
        except Exception as exc:  # reported in the figures, never hidden
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return results


def quota_figures(
    players: int = 50,
    *,
    turns: int = 20,
    tokens: int = 37,
    samples: int = 2000,
    shared_limit: int = 10,
) -> dict:
    """The figures described in the module docstring, as a dict."""
    tenant = Tenant.objects.create(name=f"bench-quota-{uuid.uuid4().hex[:10]}")
    try:
        return _figures(tenant, players, turns, tokens, samples, shared_limit)
    finally:
        close_old_connections()
        Tenant.objects.filter(pk=tenant.pk).delete()


def _figures(tenant, players, turns, tokens, samples, shared_limit) -> dict:
    roomy = services.create_plan(tenant, name="roomy", messages_per_day=10**9,
                                 tokens_per_day=2 * 10**9, tokens_per_month=2 * 10**9)  # fmt: skip
    own = [Player.objects.create(tenant=tenant, external_id=f"bench-{i}") for i in range(players)]
    for player in own:
        services.assign_plan(player, roomy)
    probe = own[0]
    for _ in range(20):  # warm the prepared statements
        admit_player(tenant.pk, probe.pk)

    def select_one() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    check = _timed(lambda: admit_player(tenant.pk, probe.pk), samples)
    baseline = _timed(select_one, samples)
    charging = _timed(lambda: charge(1, player_id=probe.pk), samples)
    committed = _timed(
        lambda: admit_player(tenant.pk, probe.pk), max(1, samples // 10), in_transaction=False
    )
    QuotaCounter.objects.filter(player=probe).delete()

    def own_turns(i: int) -> int:
        admitted = 0
        for _ in range(turns):
            admit_player(tenant.pk, own[i].pk)
            charge(tokens, player_id=own[i].pk)
            admitted += 1
        return admitted

    done = _race(players, own_turns)
    errors = [repr(r) for r in done if isinstance(r, Exception)]
    counted = {
        (c.player_id, c.period): c
        for c in QuotaCounter.objects.filter(player__in=own)
    }  # fmt: skip
    lost = double = 0
    for player, admitted in zip(own, done, strict=True):
        if isinstance(admitted, Exception):
            continue
        day = counted.get((player.pk, "day"))
        month = counted.get((player.pk, "month"))
        for stored, expected in (
            (day.messages if day else 0, admitted),
            (day.tokens if day else 0, admitted * tokens),
            (month.tokens if month else 0, admitted * tokens),
        ):
            lost += max(0, expected - stored)
            double += max(0, stored - expected)

    shared = Player.objects.create(tenant=tenant, external_id="bench-shared")
    small = services.create_plan(tenant, name="small", messages_per_day=shared_limit)
    services.assign_plan(shared, small)

    def shared_turn(_i: int) -> bool:
        try:
            admit_player(tenant.pk, shared.pk)
        except QuotaExceeded:
            return False
        return True

    raced = _race(players, shared_turn)
    errors += [repr(r) for r in raced if isinstance(r, Exception)]
    through = sum(1 for r in raced if r is True)
    stored = QuotaCounter.objects.get(player=shared, period="day").messages
    p50 = percentile(check, 50)
    base = percentile(baseline, 50)
    return {
        "players": players,
        "turns_per_player": turns,
        "check_us": _summary(check),
        "baseline_select_1_us": _summary(baseline),
        "check_over_baseline_p50": round(p50 / base, 2) if base else None,
        "charge_us": _summary(charging),
        "check_with_own_commit_us": _summary(committed),
        "admissions": sum(r for r in done if isinstance(r, int)),
        "lost": lost,
        "double_counted": double,
        "shared_player": {
            "limit": shared_limit,
            "tries": players,
            "admitted": through,
            "counter": stored,
        },
        "errors": errors[:5],
        "goal": GOAL,
        "met": p50 is not None
        and p50 <= GOAL["check_p50_us"]
        and lost == 0
        and double == 0
        and through == min(shared_limit, players) == stored
        and not errors,
    }
