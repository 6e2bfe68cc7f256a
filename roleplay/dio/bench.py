"""What DIO costs a turn (``bench_dio``, and the DIO part of ``bench_workflow``).

Two figures, each against the seed's goal:

- ``off.extra_queries``: the queries a turn of a scenario with DIO off makes beyond the
  same turn without the ``dio`` plug-in at all (its context load and pre-Actor stage).
  Goal 0: DIO off reads nothing and asks no backend.
- ``on.added_ms``: the p50/p95 DIO adds to a turn whose identity has an active prompt:
  the ``dio`` pre-Actor phase (SHA-256, replacement in the preset's slot, and the lookup
  for a backend that is asked) with DIO on minus off, plus what reading our own DIO's
  prompt inside the turn's first statement adds to that statement
  (``of_which_first_read_ms``). Goal p50 ≤ 1 ms.

``backends`` chooses the backend under the phase: ``in_process`` (a prompt held in memory:
the turn side's own cost, verification and replacement) or ``internal`` (the product's
backend, ``roleplay.dio.backends.backend_for``: its store's read included; a ``seed``
callable stores the active prompt first, else the lookup finds none and the figure is the
read alone, reported as ``found: false``). A throwaway ``bench-`` tenant holds everything
and is deleted afterwards.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.bench.stats import percentile
from roleplay.bench.tenant import BenchTenant, create_bench_tenant, delete_bench_tenant
from roleplay.models import Conversation, Scenario, Turn
from roleplay.scenarios.services import create_scenario
from roleplay.turns import PLUGINS, begin_turn, load_context
from roleplay.turns.phases import run_stage
from roleplay.turns.reads import turn_conversation

from .engine.ports import ActivePrompt, Identity, Receipt, ScheduleRequest, TaskStatus
from .engine.slots import sha256_of
from .identity import identity_for
from .plugin import DioPlugin, default_backends

GOALS = {"on_added_p50_ms": 1.0, "off_extra_queries": 0}
COMPILED = "You are Bench Keeper. You answer in short sentences. " * 20
Seed = Callable[[Identity, str], None]


class InProcess:
    """A backend holding one active prompt per identity in memory."""

    announces = False
    read_with_turn = False  # asked on each turn, as a service elsewhere is

    def __init__(self) -> None:
        self.prompts: dict[Identity, ActivePrompt] = {}

    def put(self, identity: Identity, text: str) -> None:
        self.prompts[identity] = ActivePrompt(1, "bench-v1", text, sha256_of(text))

    async def schedule(self, request: ScheduleRequest) -> Receipt:
        raise NotImplementedError

    async def task(self, request_id: str) -> TaskStatus | None:
        return None

    async def active_prompt(self, identity: Identity) -> ActivePrompt | None:
        return self.prompts.get(identity)


def _setup() -> tuple[BenchTenant, Conversation, Scenario]:
    """One conversation of a throwaway bench tenant (``roleplay.bench.tenant``) under a
    scenario with the front loop and DIO internal; no model is ever called."""
    bench = create_bench_tenant(1, "http://127.0.0.1:9/v1", warmup=0)
    name = bench.config.name
    scenario = create_scenario(
        bench.tenant,
        name="bench dio",
        model_config=bench.config,
        preActorDirector={"modelConfigId": name, "skills": []},
        dio={"mode": "internal", "modelConfigId": name},
    )
    [conversation] = bench.conversations
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    return bench, conversation, scenario


def _set_dio(scenario: Scenario, mode: str) -> None:
    dio = dict(scenario.dio or {}, mode=mode)
    Scenario.objects.filter(pk=scenario.pk).update(dio=dio)


async def _noop(event: dict) -> None:
    return None


def _stage_ms(turn: Turn, plugins: list, samples: int) -> list[float]:
    """The pre-Actor stage's time with only ``plugins``, one fresh context per sample."""
    out = []
    with PLUGINS.using(plugins):
        loop = asyncio.new_event_loop()
        try:
            for _ in range(samples):
                ctx = load_context(turn, "What is at the gate?")
                began = time.perf_counter()
                loop.run_until_complete(run_stage("pre_actor", ctx, _noop, asyncio.Event()))
                out.append((time.perf_counter() - began) * 1000)
        finally:
            loop.close()
    return out


def _read_ms(turn: Turn, samples: int) -> list[float]:
    """The turn's first statement (``turns.reads.turn_conversation``), where our own DIO's
    prompt in force is read when the scenario's DIO is internal."""
    out = []
    for _ in range(samples):
        began = time.perf_counter()
        turn_conversation(turn.conversation_id)
        out.append((time.perf_counter() - began) * 1000)
    return out


def _queries(turn: Turn, plugins: list) -> int:
    with PLUGINS.using(plugins), CaptureQueriesContext(connection) as captured:
        ctx = load_context(turn, "What is at the gate?")
        asyncio.run(run_stage("pre_actor", ctx, _noop, asyncio.Event()))
    return len(captured.captured_queries)


def measure(
    samples: int = 200, warmup: int = 20, backend: str = "in_process", seed: Seed | None = None
) -> dict[str, Any]:
    """The figures of the module doc, as a dict (``--json`` prints it)."""
    bench, conversation, scenario = _setup()
    try:
        identity = identity_for(conversation)
        if backend == "in_process":
            held = InProcess()
            held.put(identity, COMPILED)
            plugin = DioPlugin(backends=lambda config, tenant_id: held)
        else:
            if seed is not None:
                seed(identity, COMPILED)
            plugin = DioPlugin(backends=default_backends)
        turn = begin_turn(conversation, "bench-dio", "What is at the gate?").turn
        _set_dio(scenario, "off")
        off_queries = _queries(turn, [plugin]) - _queries(turn, [])
        _stage_ms(turn, [plugin], warmup)
        off_ms = _stage_ms(turn, [plugin], samples)
        _read_ms(turn, warmup)
        off_read = _read_ms(turn, samples)
        _set_dio(scenario, "internal")
        _stage_ms(turn, [plugin], warmup)
        on_ms = _stage_ms(turn, [plugin], samples)
        _read_ms(turn, warmup)
        on_read = _read_ms(turn, samples)
        check = load_context(turn, "What is at the gate?")
        asyncio.run(_apply_once(check, plugin))
        status = check.trace.get("dio", {})
    finally:
        delete_bench_tenant(bench)
    staged = {q: _p(on_ms, q) - _p(off_ms, q) for q in (50, 95)}
    read = {q: _p(on_read, q) - _p(off_read, q) for q in (50, 95)}
    added = {q: round(staged[q] + read[q], 4) for q in (50, 95)}
    return {
        "backend": backend,
        "samples": samples,
        "off": {"extra_queries": off_queries, "stage_p50_ms": _p(off_ms, 50)},
        "on": {
            "found": status.get("status") == "applied",
            "status": status.get("status"),
            "stage_p50_ms": _p(on_ms, 50),
            "added_ms": {"p50": added[50], "p95": added[95]},
            "of_which_first_read_ms": {"p50": round(read[50], 4), "p95": round(read[95], 4)},
            "first_read_p50_ms": {"off": _p(off_read, 50), "on": _p(on_read, 50)},
            "compiled_chars": len(COMPILED),
        },
        "goals": GOALS,
        "met": {
            "on_added_p50_ms": added[50] <= GOALS["on_added_p50_ms"],
            "off_extra_queries": off_queries == GOALS["off_extra_queries"],
        },
    }


async def _apply_once(ctx, plugin: DioPlugin) -> None:
    with PLUGINS.using([plugin]):
        await run_stage("pre_actor", ctx, _noop, asyncio.Event())


def _p(values: list[float], q: int) -> float:
    return percentile(values, q) or 0.0


def store(identity: Identity, text: str) -> None:
    """The active prompt stored as our DIO stores a compile's result (a version 1)."""
    from .models import VersionKind
    from .services import commit_version, conversation_of

    conversation = conversation_of(None, identity)
    commit_version(
        conversation, identity, expected=0, kind=VersionKind.COMPILED, compiled_prompt=text
    )


def figures(samples: int = 200, warmup: int = 20) -> dict[str, Any]:
    """DIO's part of ``bench_workflow``: the product's own backend with an active prompt
    stored (its read, the SHA-256 check and the replacement), and DIO off's queries."""
    from console.bootstrap import migrate_quietly

    migrate_quietly()
    return measure(samples=samples, warmup=warmup, backend="internal", seed=store)
