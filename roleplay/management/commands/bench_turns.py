"""``manage.py bench_turns``: N concurrent WebSocket players against a live daphne.

The scripted model server (in a process of its own) answers every turn instantly with the fixed
200-token reply in 20 chunks; the app runs in a daphne child on this process's database and
Redis, as in production. Per turn it measures the time from sending ``user_message`` to the
first ``delta`` minus the model server's own time to its first chunk (the harness overhead),
the whole turn, and checks every delta arrived once, in order, and reassembles the reply.
The baseline runs the same players straight against the model server with the ``openai``
SDK, so ``ratio`` says what the harness costs on this machine. Players think between turns
(``--think-ms``, see ``roleplay.bench.players.Pacing``); a second run of the same players
with no think time at all reports the saturation figures (throughput, and the latency of a
queue) under ``saturation``. A throwaway ``bench-*``
tenant holds the run's data and is deleted at the end. All traffic stays on 127.0.0.1.

``--agentic`` runs the same turns with Agent V2 on: the players' character has a scenario
with Agent V2 whose Actor is the same model config (the same model, the same reply), the
orchestrator, specialists and Director on the same scripted model server under model names
of their own (``roleplay.bench.agentic``), and each conversation starts with a committed
state of a few thousand characters, so every turn reads the state, places the Actor's
continuity block and records its ``PlanningRun`` with its reply (the outbox row; the turn
sends no task). No relay runs (no worker), so no run is executed: what is measured is the
Actor path's cost of Agent V2, not a worker competing for the machine (``bench_agent``
measures the background runs themselves). Any task the daphne children send goes to a
private queue that no worker reads (``roleplay.bench.asgi``), counted and purged at the end:
``planning_tasks_queued`` counts the planning tasks among them (none: the relay sends
those). ``--agentic compare`` runs the players without Agent V2
and the same number with it, on the same servers, twice each in A B B A order (what drifts
over a run falls on both alike), and prints both reports and a
``comparison``: the ratio of the time-to-first-delta p50s (goal: with within 10 % of
without, ``ttfd_p50_ratio`` <= 1.10) and the lost deltas of each (goal: 0). Without
``--agentic`` nothing changes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from urllib.parse import quote

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.utils import timezone

from console.bootstrap import migrate_quietly
from console.live_server import database_url_for, start_daphne
from console.tickets import issue_ticket
from roleplay.bench import capabilities as caps
from roleplay.bench import players as bench_players
from roleplay.bench import turns_output
from roleplay.bench.agentic import STATE_CHARS, AgenticSet, add_agentic
from roleplay.bench.hooks import hook_figures, memory_comparison
from roleplay.bench.limits import OFF_ENV as NO_BURST_LIMITS
from roleplay.bench.memory_warm import PAST, split, warm
from roleplay.bench.model_process import ModelServerProcess
from roleplay.bench.queue import QUEUE_ENV, new_queue_name, purge
from roleplay.bench.stats import (
    TurnSample,
    report,
    run_figures,
    summary,
)
from roleplay.bench.tenant import create_bench_tenant, delete_bench_tenant
from roleplay.bench.turns_output import WITH, WITHOUT
from roleplay.bench.workload import REPLY_CHUNKS, REPLY_TOKENS, reply_text
from roleplay.models import PlanningRun, PlanningStatus, Turn, TurnKind

MAX_PLAYERS = 500
MAX_TURNS = 100
MAX_THINK_MS = 600_000
MAX_SERVERS = 8
# Players read for about two seconds (1 to 3) before each message: far quicker than people
# type, and a load this machine sustains, so latency is measured below saturation. The run
# with no think time (``saturation`` in the output) measures throughput instead.
DEFAULT_THINK_MS = 2000.0
QUIET_LOGGERS = ("httpx", "httpx2", "openai")
AGENTIC_ASGI = "roleplay.bench.asgi:application"
WARM_QUERY = "the lantern in the north tower"

# A player: (run_id, index, turns, samples, *, turn_timeout) -> coroutine.
Player = Callable[..., object]


class Command(BaseCommand):
    help = "Benchmark streamed chat turns over WebSockets (see the module docstring)."

    def add_arguments(self, parser):
        parser.add_argument("--players", type=int, default=50)
        parser.add_argument("--turns", type=int, default=5, help="sequential turns per player")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--warmup", type=int, default=1, help="unmeasured warm-up players")
        parser.add_argument(
            "--think-ms",
            type=float,
            default=DEFAULT_THINK_MS,
            help="a player's think time before each message (0: send the next at once)",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the think times")
        parser.add_argument(
            "--servers", type=int, default=1, help="daphne processes sharing the players"
        )
        parser.add_argument("--turn-timeout", type=float, default=30.0, help="seconds")
        parser.add_argument(
            "--timeout", type=float, default=300.0, help="seconds for each phase's players"
        )
        parser.add_argument(
            "--no-seed-state",
            action="store_true",
            help="with --agentic: conversations start with no state (the Actor reads the "
            "short default note), to tell the state's prompt size from the rest",
        )
        parser.add_argument(
            "--memory-warm",
            action="store_true",
            help="each conversation starts with a past, a stated preference, its messages "
            "indexed and its pre-turn pack stored, so the turns' memory hooks read a hit",
        )
        parser.add_argument(
            "--capabilities",
            choices=("compare",),
            help="'compare': the players with every capability off, then on a character with "
            "memory at its defaults and a bound 5,000-entry worldbook; what they add and each "
            "hook's share (roleplay.bench.capabilities)",
        )
        parser.add_argument(
            "--agentic",
            nargs="?",
            const="on",
            choices=("on", "compare"),
            help="Agent V2 on for the players (planning runs recorded, not run); 'compare': "
            "a run without it, then one with it, and the ratio of their time to first delta",
        )

    def handle(self, *args, **opts):
        players, turns, warmup = opts["players"], opts["turns"], opts["warmup"]
        limits = _checked(opts)
        pacing = bench_players.Pacing(think_s=opts["think_ms"] / 1000.0, seed=opts["seed"])
        for name in QUIET_LOGGERS:  # the baseline's SDK logs every request at INFO
            logging.getLogger(name).setLevel(logging.WARNING)
        migrate_quietly()  # the daphne child serves this database as it is
        agentic, capabilities = opts["agentic"], opts["capabilities"]
        # The players' runs, by arm: without Agent V2 (the default), with it, or both; or
        # every capability off and on.
        arms = {"on": (WITH,), "compare": (WITHOUT, WITH)}.get(agentic, (WITHOUT,))
        if capabilities:
            arms = (caps.OFF, caps.ON)
        run = self._run(opts, arms, limits, pacing)
        run_settings = {
            "reply_tokens": REPLY_TOKENS,
            "reply_chunks": REPLY_CHUNKS,
            "warmup_players": warmup,
            "think_ms": opts["think_ms"],
            "servers": opts["servers"],
            "seed": opts["seed"],
            **limits,
        }
        reports = {
            arm: report(
                players,
                turns,
                run.harness[arm],
                run.baseline,
                {**run_settings, "agentic": arm == WITH} if agentic else run_settings,
                run.saturation[arm],
            )
            for arm in arms
        }
        for arm in arms:
            reports[arm]["hooks"] = run.hooks[arm]
        if WITH in reports:
            reports[WITH]["agentic"] = run.agentic_info
        data, text = turns_output.output(reports, arms, players, turns, agentic, capabilities)
        self.stdout.write(json.dumps(data, indent=2) if opts["json"] else text)

    def _run(self, opts, arms: tuple, limits: dict, pacing: bench_players.Pacing) -> _Run:
        """The bench tenant and its players, every arm's rounds through daphne, the SDK
        baseline and the hooks' figures; the tenant deleted after, whatever happened."""
        players, turns, warmup = opts["players"], opts["turns"], opts["warmup"]
        agentic, capabilities = opts["agentic"], opts["capabilities"]
        database_url = database_url_for(connection.settings_dict)
        queue = new_queue_name() if agentic else None
        # Every player connects from 127.0.0.1: no burst limits (``roleplay.bench.limits``).
        daphne_options: dict = {"extra_env": dict(NO_BURST_LIMITS)}
        if queue:
            extra = {**NO_BURST_LIMITS, QUEUE_ENV: queue}
            daphne_options = {"app": AGENTIC_ASGI, "extra_env": extra}
        agentic_info = None
        with ModelServerProcess(agentic=bool(agentic)) as model_server:
            # At least one warm-up player per server, so that every server is warm.
            warm = max(warmup, opts["servers"]) if warmup else 0
            plain = WITHOUT in arms or capabilities
            bench = create_bench_tenant(
                players if plain else 0, model_server.base_url, warmup=warm if plain else 0
            )
            try:
                conversations = {arms[0]: (bench.conversations, bench.warmup)}
                if capabilities:
                    caps.turn_off(bench.conversations[0].character)
                    on = caps.add_capabilities(bench.tenant, players=players, warmup=warm)
                    conversations[caps.ON] = (on.conversations, on.warmup)
                v2: AgenticSet | None = None
                if agentic:
                    v2 = add_agentic(
                        bench.tenant,
                        bench.config,
                        model_server.base_url,
                        players=players,
                        warmup=warm,
                        seed_state=not opts.get("no_seed_state"),
                    )
                    conversations[WITH] = (v2.conversations, v2.warmup)
                halves = _split_memory(conversations) if opts["memory_warm"] else None
                servers = [
                    start_daphne(database_url, settings.REDIS_URL, **daphne_options)
                    for _ in range(opts["servers"])
                ]
                try:
                    harness, paced_until, saturation = self._measure(
                        model_server, servers, arms, conversations, turns, limits, pacing
                    )
                finally:
                    for server in servers:
                        server.stop()
                sdk = partial(bench_players.sdk_player, model_server.base_url)
                baseline = _phase(
                    model_server,
                    turns,
                    limits,
                    pacing,
                    measured=[sdk] * players,
                    warmup=[sdk] * warmup,
                )
                if v2 is not None:
                    agentic_info = _agentic_figures(v2)
                hooks = {
                    arm: (
                        memory_comparison(*halves[arm], before=paced_until)
                        if halves
                        else hook_figures([c.pk for c in conversations[arm][0]], before=paced_until)
                    )
                    for arm in arms
                }
            finally:
                try:
                    if queue:
                        queued = purge(queue)
                        if agentic_info is not None:
                            agentic_info["planning_tasks_queued"] = queued
                finally:
                    delete_bench_tenant(bench)
        return _Run(harness, saturation, baseline, hooks, agentic_info)

    def _measure(self, model_server, servers, arms, conversations, turns, limits, pacing):
        """(each arm's figures, when the paced turns ended, each arm's saturation figures or
        None): the players over the daphne ``servers``."""

        def sockets(conversations) -> list[Player]:
            # The players spread over the servers, as a load balancer would.
            return [
                _socket_player(servers[i % len(servers)].ws_url, c)
                for i, c in enumerate(conversations)
            ]

        def cpu() -> float:
            return sum(server.cpu_seconds() for server in servers)

        # Compared arms run in A B B A order, each twice, so that whatever drifts over the
        # run (a database that grows, its autovacuum, warmer caches) falls on both alike.
        order = (*arms, *reversed(arms)) if len(arms) == 2 else arms
        rounds: dict[str, list[dict]] = {arm: [] for arm in arms}
        for arm in order:
            rounds[arm].append(
                _round(
                    model_server,
                    turns,
                    limits,
                    pacing,
                    measured=sockets(conversations[arm][0]),
                    warmup=[] if rounds[arm] else sockets(conversations[arm][1]),
                    cpu=cpu,
                )
            )
        harness = {arm: _figures(rounds[arm], with_cpu=True) for arm in arms}
        paced_until = timezone.now()  # the turns the hook figures cover
        saturation = dict.fromkeys(arms)
        if pacing.think_s > 0:  # the same players again, with no think time
            saturation = {
                arm: _phase(
                    model_server,
                    turns,
                    limits,
                    bench_players.Pacing(),
                    measured=sockets(conversations[arm][0]),
                    warmup=[],
                    cpu=cpu,
                )
                for arm in arms
            }
        if any(h["errors"] or h["warmup_errors"] for h in harness.values()):
            for server in servers:
                self.stderr.write(f"daphne log (tail):\n{server.log_tail()}")
        return harness, paced_until, saturation


@dataclass
class _Run:
    """What one run measured, by arm (the baseline is the SDK's, shared)."""

    harness: dict
    saturation: dict
    baseline: dict
    hooks: dict
    agentic_info: dict | None


def _checked(opts) -> dict:
    """The options' bounds checked; the time limits."""
    players, turns, warmup = opts["players"], opts["turns"], opts["warmup"]
    if not 1 <= players <= MAX_PLAYERS or not 1 <= turns <= MAX_TURNS or warmup < 0:
        raise CommandError(f"--players 1..{MAX_PLAYERS}, --turns 1..{MAX_TURNS}")
    if not 0 <= opts["think_ms"] <= MAX_THINK_MS:
        raise CommandError(f"--think-ms 0..{MAX_THINK_MS}")
    if not 1 <= opts["servers"] <= MAX_SERVERS:
        raise CommandError(f"--servers 1..{MAX_SERVERS}")
    if opts["agentic"] and opts["capabilities"]:
        raise CommandError("--agentic and --capabilities are separate runs")
    return {"turn_timeout": opts["turn_timeout"], "total_timeout": opts["timeout"]}


def _split_memory(conversations: dict) -> dict:
    """``--memory-warm``: each arm's measured players split into memory on (warm) and off
    (``bench.memory_warm.split``); the warm-up players made warm. Their conversations' ids."""
    halves = {}
    for arm, (measured, warmup) in conversations.items():
        for conversation in warmup:
            warm(conversation, WARM_QUERY, lines=PAST)
        on, off = split(measured, WARM_QUERY)
        halves[arm] = ([c.pk for c in on], [c.pk for c in off])
    return halves


def _agentic_figures(v2: AgenticSet) -> dict:
    """What the Agent V2 players left: a planning run recorded for every chat turn, none
    sent by the turns nor executed (no relay runs here)."""
    ids = [c.pk for c in (*v2.conversations, *v2.warmup)]
    runs = PlanningRun.objects.filter(conversation_id__in=ids)
    return {
        "chat_turns": Turn.objects.filter(conversation_id__in=ids, kind=TurnKind.CHAT).count(),
        "planning_runs_recorded": runs.count(),
        "planning_runs_executed": runs.exclude(status=PlanningStatus.QUEUED).count(),
        "planning_tasks_queued": None,
        "seed_state_chars": STATE_CHARS,
    }


def _socket_player(ws_base: str, conversation) -> Player:
    """A WebSocket player on its own conversation. The one-time ticket is signed here (no
    database needed) and redeemed by the daphne child, which shares SECRET_KEY and Redis."""
    ticket, _ttl = issue_ticket(conversation)
    url = f"{ws_base}/ws/conversations/{conversation.id}/?ticket={quote(ticket)}"
    return partial(bench_players.websocket_player, url)


def _phase(
    model_server,
    turns: int,
    limits: dict,
    pacing: bench_players.Pacing,
    *,
    measured: Sequence[Player],
    warmup: Sequence[Player],
    cpu: Callable[[], float] | None = None,
) -> dict:
    """The figures of one run of the measured players (see :func:`_round`)."""
    one = _round(model_server, turns, limits, pacing, measured=measured, warmup=warmup, cpu=cpu)
    return _figures([one], with_cpu=cpu is not None)


def _round(
    model_server,
    turns: int,
    limits: dict,
    pacing: bench_players.Pacing,
    *,
    measured: Sequence[Player],
    warmup: Sequence[Player],
    cpu: Callable[[], float] | None = None,
) -> dict:
    """Run the warm-up players (one turn each, not measured), then every measured player at
    once; the measured turns' samples. ``cpu`` reads the server's CPU seconds, giving its
    CPU cost per turn: a figure that does not depend on what else the machine runs."""
    run_id = uuid.uuid4().hex[:8]
    turn_timeout, total_timeout = limits["turn_timeout"], limits["total_timeout"]
    cpu_used = 0.0

    async def run() -> tuple[list[TurnSample], list[TurnSample], float]:
        nonlocal cpu_used
        warm: list[TurnSample] = []
        await bench_players.run_players(
            [p(f"{run_id}0", i, 1, warm, turn_timeout=turn_timeout) for i, p in enumerate(warmup)],
            total_timeout=total_timeout,
        )
        model_server.clear()
        samples: list[TurnSample] = []
        cpu_before = cpu() if cpu else 0.0
        wall = await bench_players.run_players(
            [
                p(run_id, i, turns, samples, turn_timeout=turn_timeout, pacing=pacing)
                for i, p in enumerate(measured)
            ],
            total_timeout=total_timeout,
        )
        cpu_used = cpu() - cpu_before if cpu else 0.0
        return warm, samples, wall

    warm, samples, wall = asyncio.run(run())
    samples = bench_players.complete_samples(samples, run_id, len(measured), turns)
    bench_players.attach_server_timings(samples, model_server.request_timings)
    return {
        "samples": samples,
        "wall": wall,
        "cpu_s": cpu_used,
        "warmup_errors": sum(1 for s in warm if s.error),
    }


def _figures(rounds: list[dict], *, with_cpu: bool) -> dict:
    """The figures of one arm's rounds together."""
    samples = [s for r in rounds for s in r["samples"]]
    figures = run_figures(
        samples,
        expected_deltas=REPLY_CHUNKS,
        expected_text=reply_text(),
        wall_s=sum(r["wall"] for r in rounds),
    )
    figures["warmup_errors"] = sum(r["warmup_errors"] for r in rounds)
    if with_cpu:
        cpu_s = sum(r["cpu_s"] for r in rounds)
        figures["server_cpu_ms_per_turn"] = round(cpu_s * 1000 / max(len(samples), 1), 2)
    if len(rounds) > 1:  # each round on its own: how far the rounds of one arm spread
        figures["rounds"] = [_round_figures(r, with_cpu=with_cpu) for r in rounds]
    return figures


def _round_figures(one: dict, *, with_cpu: bool) -> dict:
    samples = one["samples"]
    figures = {"ttfd_p50_ms": summary(s.ttfd_ms for s in samples)["p50"]}
    if with_cpu:
        figures["server_cpu_ms_per_turn"] = round(one["cpu_s"] * 1000 / max(len(samples), 1), 2)
    return figures
