"""What ``bench_agent`` measures: the Agent V2 background run of each turn, in-process.

A throwaway ``bench-`` tenant (deleted afterwards) holds a conversation whose character's
default scenario has Agent V2 on, every role on the scripted model server
(``roleplay.bench.agentic``, the happy path). Each turn goes through the real turn path
(``roleplay.turns.run_to_end``: the player's message stored, the context hook reading the
state, placing the block and recording the turn's ``PlanningRun``, the Actor's reply
streamed and stored); then the run is executed here, as the Celery task's body would be
(``roleplay.agentic.services.planning.execute``), before the next turn, so each turn reads the
state the one before committed. The run is recorded with the reply and no relay runs
here, so nothing else sends its task (what other tasks the turn sends go to a private queue
that nobody reads, purged at the end: ``roleplay.bench.queue``).

The figures are the runs' own ``PlanningRun.timings``: ``model_ms`` (time spent in model
calls, as the runner sees them: HTTP to the model server and the gateway's ``ModelCall``
rows), ``task_ms`` (the task's body up to its close), ``overhead_ms`` = ``task_ms`` −
``model_ms`` (what the background costs beyond waiting for models); plus ``execute_ms``,
this process's wall time around ``execute``, and ``after_task_ms`` = ``execute_ms`` −
``task_ms``: what ``task_ms`` leaves out (the closing transaction with the state commit, the
``planning.completed`` announcement, and the task's start before its clock).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from roleplay.bench.agentic import STATE_CHARS, AgenticSet, add_agentic
from roleplay.bench.stats import summary
from roleplay.bench.tenant import BenchTenant, create_bench_tenant, delete_bench_tenant
from roleplay.models import AgentStateRevision, PlanningRun, TurnStatus

GOAL_OVERHEAD_P50_MS = 100.0
TIMING_KEYS = ("overhead_ms", "model_ms", "task_ms", "total_ms")
STAGE_KEYS = ("phase1_ms", "specialists_ms", "phase2_ms", "director_ms")
UPDATED = "updated"
PER_TURN_KEYS = ("turn", "outcome", "error_code", "revision", "overhead_ms", "model_ms", "task_ms")


@dataclass
class AgentBench:
    bench: BenchTenant
    agentic: AgenticSet
    run_id: str

    @property
    def conversation(self):
        return self.agentic.conversations[0]


def create(base_url: str, *, warmup: bool) -> AgentBench:
    """The bench tenant: one measured conversation, and one for warm-up turns."""
    bench = create_bench_tenant(0, base_url, warmup=0)
    agentic = add_agentic(
        bench.tenant, bench.config, base_url, players=1, warmup=int(warmup), seed_state=False
    )
    return AgentBench(bench, agentic, uuid.uuid4().hex[:8])


def delete(bench: AgentBench) -> None:
    delete_bench_tenant(bench.bench)


def play(bench: AgentBench, conversation, index: int, *, label: str = "t") -> dict:
    """One turn through the real turn path, then its planning run executed here."""
    from roleplay.agentic.services import planning
    from roleplay.turns import hub, run_to_end

    content = f"bench turn {index}: the keeper lifts the lamp. tell me what the tide brings."
    started = time.perf_counter()
    turn = run_to_end(conversation, f"bench-agent-{bench.run_id}-{label}{index}", content)
    sample: dict = {"turn": index, "actor_turn_ms": _ms(started)}
    if turn.status != TurnStatus.COMPLETE:
        return {**sample, "outcome": "turn_" + turn.status, "error_code": turn.error_code}
    run = PlanningRun.objects.filter(turn=turn).first()
    if run is None:
        return {**sample, "outcome": "no_planning_run", "error_code": ""}
    started = time.perf_counter()
    planning.execute(str(run.pk), announce=hub.announce)
    sample["execute_ms"] = _ms(started)
    run.refresh_from_db()
    task_ms = run.timings.get("task_ms")
    return {
        "after_task_ms": round(sample["execute_ms"] - task_ms, 1) if task_ms else None,
        **sample,
        **{key: run.timings.get(key) for key in (*TIMING_KEYS, *STAGE_KEYS)},
        "outcome": run.outcome,
        "error_code": run.error_code,
        "revision": run.revision,
        "tools_run": list(run.tools_run),
        "model_calls": len(run.model_calls),
    }


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


def revisions(bench: AgentBench) -> int:
    """How many state revisions the measured conversation holds."""
    return AgentStateRevision.objects.filter(
        conversation=bench.conversation, scenario=bench.agentic.scenario
    ).count()


def report(samples: list[dict], *, warmup_turns: int, committed: int, purged: int) -> dict:
    outcomes: dict[str, int] = {}
    for sample in samples:
        outcomes[sample["outcome"]] = outcomes.get(sample["outcome"], 0) + 1
    figures = {key: summary(s.get(key) for s in samples) for key in TIMING_KEYS}
    overhead_p50 = figures["overhead_ms"]["p50"]
    clean = outcomes.get(UPDATED, 0) == len(samples) and committed == len(samples)
    return {
        "turns": len(samples),
        "warmup_turns": warmup_turns,
        **figures,
        "execute_ms": summary(s.get("execute_ms") for s in samples),
        "after_task_ms": summary(s.get("after_task_ms") for s in samples),
        "actor_turn_ms": summary(s.get("actor_turn_ms") for s in samples),
        "stages_ms": {key: summary(s.get(key) for s in samples) for key in STAGE_KEYS},
        "model_calls_per_turn": summary(s.get("model_calls") for s in samples),
        "outcomes": outcomes,
        "revisions_committed": committed,
        "celery_tasks_purged": purged,
        "clean": clean,
        "goal": {
            "overhead_p50_ms": overhead_p50,
            "goal_ms": GOAL_OVERHEAD_P50_MS,
            "meets_goal": bool(
                clean and overhead_p50 is not None and overhead_p50 <= GOAL_OVERHEAD_P50_MS
            ),
        },
        "per_turn": [{key: s.get(key) for key in PER_TURN_KEYS} for s in samples],
        "settings": {"state_chars": STATE_CHARS, "model_server": "scripted, own process"},
    }


def render(data: dict) -> str:
    """A readable summary of ``report()`` for a terminal."""

    def cell(figures: dict) -> str:
        return "  ".join(
            f"{key} {figures[key]:8.1f}" if figures[key] is not None else f"{key}      n/a"
            for key in ("p50", "p95", "max")
        )

    goal = data["goal"]
    lines = [
        f"bench_agent: {data['turns']} turns with Agent V2 (after {data['warmup_turns']} "
        "warm-up turns), each planning run executed in-process",
        "",
        f"{'overhead (task - model), ms':30} {cell(data['overhead_ms'])}",
        f"{'model calls, ms':30} {cell(data['model_ms'])}",
        f"{'task, ms':30} {cell(data['task_ms'])}",
        f"{'execute() wall, ms':30} {cell(data['execute_ms'])}",
        f"{'  after task_ms, ms':30} {cell(data['after_task_ms'])}",
        f"{'actor turn, ms':30} {cell(data['actor_turn_ms'])}",
    ]
    lines += [f"{'  ' + key:30} {cell(data['stages_ms'][key])}" for key in STAGE_KEYS]
    lines += [
        "",
        f"outcomes {data['outcomes']}  revisions committed {data['revisions_committed']}  "
        f"model calls per turn p50 {data['model_calls_per_turn']['p50']}",
        f"goal overhead p50 <= {goal['goal_ms']:g} ms: {goal['overhead_p50_ms']} ms, "
        + ("met" if goal["meets_goal"] else "MISSED"),
    ]
    return "\n".join(lines)
