"""``bench_front_loop``: what the front tool loop costs a turn beyond its model calls, and how
much later the player sees the first word than with direct generation.

Two conversations of one bench tenant answer the same scripted latencies (a real HTTP
server speaking the OpenAI protocol, ``scripted_server``): one runs a scenario with a
``preActorDirector`` (the controller asks for ``segments`` Actor steps, then ``over``), the
other generates directly. Turns alternate between them, each through the real turn
(``run_turn``: context read, phases, gateway, streaming, commit), with an ``emit`` that
stamps the first ``delta``.

Per loop turn:

- **overhead per step**: the turn's time less its model calls' own time (the calls'
  ``ModelCall.latency_ms``), less the direct turn's same figure (what every turn costs
  without the loop: context read, commit), divided by the loop's steps (goal p50 ≤ 15 ms);
- **time to first delta** against the direct turn's, less the controller's first call
  (goal: at most 20 ms more than the controller's latency).

Reported apart: ``cold``, the first pair of a fresh process (its very first turn a loop
turn, or with ``--direct-first`` a direct one, so the loop's own first-use costs show
alone); ``after_publish``, the first pair after the scenario is saved again; the rest are
``warm``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync

from roleplay.bench.stats import summary
from roleplay.bench.tenant import BenchTenant, create_bench_tenant, delete_bench_tenant
from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer
from roleplay.models import ModelCall, ModelConfig
from roleplay.scenarios.services import create_scenario, update_scenario
from roleplay.turns import begin_and_load
from roleplay.turns.run import run_turn

CONTROLLER_MODEL = "bench-controller"
GOAL_STEP_OVERHEAD_MS = 15.0
GOAL_TTFD_EXTRA_MS = 20.0


@dataclass(frozen=True)
class Latencies:
    controller_ms: float
    actor_first_ms: float
    chunks: int
    chunk_ms: float
    segments: int


def responder(lat: Latencies):
    """The scripted server's answer to each request: the controller asks for ``segments``
    Actor steps (counting the receipts it has read), then ``over``."""

    def answer(request: dict[str, Any]) -> Reply:
        if request.get("model") == CONTROLLER_MODEL:
            receipts = sum(1 for m in request["messages"] if m.get("role") == "tool")
            name = "actor" if receipts < lat.segments else "over"
            return Reply(
                tool_calls=[{"name": name, "arguments": {}}], delay=lat.controller_ms / 1000
            )
        words = " ".join(f"word{i}" for i in range(lat.chunks))
        return Reply(
            content=words,
            chunks=lat.chunks,
            delay=lat.actor_first_ms / 1000,
            chunk_delay=lat.chunk_ms / 1000,
        )

    return answer


@dataclass
class Run:
    bench: BenchTenant
    looped: Any
    direct: Any
    samples: dict[str, list[dict]] = field(default_factory=lambda: {"loop": [], "direct": []})
    after_publish: tuple[dict, dict] | None = None


def create(base_url: str) -> Run:
    bench = create_bench_tenant(2, base_url, warmup=0)
    ModelConfig.objects.create(
        tenant=bench.tenant,
        name="bench-controller",
        provider="openai_compatible",
        model=CONTROLLER_MODEL,
        base_url=base_url,
        context_limit=8192,
        max_output_tokens=256,
        timeout_ms=30_000,
    )
    scenario = create_scenario(
        bench.tenant,
        name="bench-loop",
        model_config=bench.config,
        preActorDirector={"modelConfigId": "bench-controller", "skills": [{"name": "narrate"}]},
    )
    looped, direct = bench.conversations
    looped.scenario = scenario
    looped.save(update_fields=["scenario"])
    return Run(bench, looped, direct)


def one_turn(conversation) -> dict:
    """One real turn of ``conversation``: its wall time, time to first delta, steps and
    the model calls' own time."""
    start, preloaded = begin_and_load(
        conversation, f"bench-{uuid.uuid4().hex[:12]}", "Hand the guard the key.", kind="chat"
    )
    first: list[float] = []
    began = time.perf_counter()

    async def emit(event: dict) -> None:
        if event.get("type") == "delta" and not first:
            first.append(time.perf_counter())

    async def go() -> None:
        await run_turn(start.turn, emit, asyncio.Event(), preloaded)

    async_to_sync(go)()
    ended = time.perf_counter()
    turn = start.turn
    turn.refresh_from_db()
    calls = list(
        ModelCall.objects.filter(turn=turn).order_by("created_at").values("purpose", "latency_ms")
    )
    model_ms = sum(c["latency_ms"] or 0 for c in calls)
    controller = [c["latency_ms"] for c in calls if c["purpose"] == "front_controller"]
    loop = (turn.trace or {}).get("front_loop") or {}
    return {
        "status": turn.status,
        "turn_ms": (ended - began) * 1000,
        "ttfd_ms": ((first[0] - began) * 1000) if first else None,
        "model_ms": model_ms,
        "steps": loop.get("steps", 0),
        "controller_first_ms": controller[0] if controller else None,
        "ending": loop.get("ending"),
    }


def measure(run: Run, turns: int, *, loop_first: bool) -> None:
    """``turns`` pairs; the first pair in the order asked (the process's very first turn
    is then a loop turn, or a direct one), the others loop then direct. Then the scenario
    is published again (a new version) and one more pair runs: the first turn after it."""
    for index in range(turns):
        if index == 0 and not loop_first:
            direct = one_turn(run.direct)
            run.samples["loop"].append(one_turn(run.looped))
            run.samples["direct"].append(direct)
            continue
        run.samples["loop"].append(one_turn(run.looped))
        run.samples["direct"].append(one_turn(run.direct))
    scenario = run.looped.scenario
    update_scenario(
        scenario,
        version=scenario.version,
        preActorDirector={"modelConfigId": "bench-controller", "skills": [{"name": "tell"}]},
    )
    run.after_publish = (one_turn(run.looped), one_turn(run.direct))


def report(run: Run, lat: Latencies, *, loop_first: bool) -> dict:
    loop, direct = run.samples["loop"], run.samples["direct"]

    def pairs(rows_loop, rows_direct):
        overhead, extra = [], []
        for a, b in zip(rows_loop, rows_direct, strict=False):
            if a["steps"]:
                beyond = (a["turn_ms"] - a["model_ms"]) - (b["turn_ms"] - b["model_ms"])
                overhead.append(beyond / a["steps"])
            if a["ttfd_ms"] is not None and b["ttfd_ms"] is not None and a["controller_first_ms"]:
                extra.append(a["ttfd_ms"] - b["ttfd_ms"] - a["controller_first_ms"])
        return overhead, extra

    _cold_overhead, cold_extra = pairs(loop[:1], direct[:1])
    overhead, extra = pairs(loop[1:], direct[1:])
    published = [run.after_publish] if run.after_publish else []
    pub_overhead, pub_extra = pairs([p[0] for p in published], [p[1] for p in published])
    warm = summary(overhead)
    warm_extra = summary(extra)
    return {
        "settings": lat.__dict__,
        "turns": {"loop": len(loop), "direct": len(direct)},
        "errors": sum(1 for r in loop + direct if r["status"] != "complete"),
        "endings": sorted({r["ending"] for r in loop if r["ending"]}),
        "steps_per_turn": loop[-1]["steps"] if loop else 0,
        "cold": {
            "process_first_turn": "loop" if loop_first else "direct",
            "loop": _alone(loop[0], lat) if loop else None,
            "direct": _alone(direct[0], lat) if direct else None,
            "paired_ttfd_extra_beyond_controller_ms": _round(cold_extra[0]) if cold_extra else None,
        },
        "after_publish": {
            "overhead_per_step_ms": _round(pub_overhead[0]) if pub_overhead else None,
            "ttfd_extra_beyond_controller_ms": _round(pub_extra[0]) if pub_extra else None,
        },
        "warm": {
            "overhead_per_step_ms": warm,
            "ttfd_extra_beyond_controller_ms": warm_extra,
            "ttfd_loop_ms": summary(r["ttfd_ms"] for r in loop[1:]),
            "ttfd_direct_ms": summary(r["ttfd_ms"] for r in direct[1:]),
            "controller_call_ms": summary(r["controller_first_ms"] for r in loop[1:]),
        },
        "goals": {
            "overhead_per_step_p50_ms": GOAL_STEP_OVERHEAD_MS,
            "ttfd_extra_beyond_controller_ms": GOAL_TTFD_EXTRA_MS,
        },
        "meets_goals": {
            "overhead": warm["p50"] is not None and warm["p50"] <= GOAL_STEP_OVERHEAD_MS,
            "ttfd": warm_extra["p50"] is not None and warm_extra["p50"] <= GOAL_TTFD_EXTRA_MS,
        },
    }


def _alone(row: dict, lat: Latencies) -> dict:
    """One turn's figures on their own: its time to first delta, and what of it was not
    the model's (less the controller's first call and the Actor's scripted first byte);
    its time beyond model calls."""
    model_before = (row["controller_first_ms"] or 0) + lat.actor_first_ms
    own = None if row["ttfd_ms"] is None else row["ttfd_ms"] - model_before
    return {
        "ttfd_ms": _round(row["ttfd_ms"]),
        "own_delay_to_first_delta_ms": _round(own),
        "beyond_model_ms": _round(row["turn_ms"] - row["model_ms"]),
        "steps": row["steps"],
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def run_bench(turns: int, lat: Latencies, *, loop_first: bool = True) -> dict:
    server = ScriptedOpenAIServer(default=Reply.from_callable(responder(lat)))
    server.start()
    try:
        run = create(server.base_url)
        try:
            measure(run, turns, loop_first=loop_first)
            return report(run, lat, loop_first=loop_first)
        finally:
            delete_bench_tenant(run.bench)
    finally:
        server.stop()
