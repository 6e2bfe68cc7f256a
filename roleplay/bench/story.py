"""What ``bench_story --live`` measures: the time Story adds before the first delta.

A throwaway ``bench-`` tenant (deleted afterwards) holds one conversation whose scenario
has ``storyV1`` on, every model on the scripted server in its own process answering at once
(``roleplay.bench.story_models``). Each turn goes through the real turn path
(``roleplay.turns.run_to_end``): the story's read (with the turn's other reads), the story
phase before the Actor (accept the previous stored reply, settle, plan, deal, the
acceptance's own compare-and-set), the Actor's stream, the post-turn save. The figure is
the read plus the story phase's own duration (the turn trace's ``hooks_ms`` and ``phases``
records: everything the Actor waits for) minus the time its model calls took (their
``ModelCall.latency_ms``): the preparation beyond model time. Goal: p50 ≤ 50 ms.
"""

from __future__ import annotations

import uuid

from roleplay.bench.stats import summary
from roleplay.bench.tenant import BenchTenant, create_bench_tenant
from roleplay.models import ModelCall, Scenario, TurnStatus

GOAL_PREP_P50_MS = 50.0


def create(base_url: str) -> tuple[BenchTenant, object]:
    bench = create_bench_tenant(1, base_url, warmup=0)
    scenario = Scenario.objects.create(
        tenant=bench.tenant,
        name="bench-story",
        model_config=bench.config,
        story_v1={"enabled": True, "modelConfigId": str(bench.config.pk)},
    )
    conversation = bench.conversations[0]
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    return bench, conversation


def play(conversation, index: int, run_id: str) -> dict:
    from roleplay.turns import run_to_end

    text = f"bench turn {index}: I follow the keeper up the stairs and ask about the ship."
    turn = run_to_end(conversation, f"bench-story-{run_id}-{index}", text)
    sample: dict = {"turn": index, "status": turn.status}
    if turn.status != TurnStatus.COMPLETE:
        return {**sample, "error_code": turn.error_code}
    phases = {p["name"]: p for p in turn.trace.get("phases", [])}
    story = turn.trace.get("story", {})
    calls = list(
        ModelCall.objects.filter(pk__in=story.get("model_calls") or []).values_list(
            "purpose", "latency_ms"
        )
    )
    model_ms = sum(latency for _purpose, latency in calls)
    # The story's reads are made with the turn's other reads (a context hook): count them.
    read_ms = (turn.trace.get("hooks_ms") or {}).get("story", 0.0)
    phase_ms = phases.get("story", {}).get("duration_ms")
    if phase_ms is not None:
        phase_ms = round(phase_ms + read_ms, 2)
    return {
        **sample,
        "route": story.get("route"),
        "phase_ms": phase_ms,
        "model_ms": round(model_ms, 1),
        "prep_beyond_model_ms": round(phase_ms - model_ms, 1) if phase_ms is not None else None,
        "save_ms": phases.get("story_save", {}).get("duration_ms"),
        "model_calls": [purpose for purpose, _latency in calls],
        **{f"{k}_ms": v for k, v in (story.get("timings_ms") or {}).items()},
        "read_ms": read_ms,
    }


def report(samples: list[dict], warmup: int) -> dict:
    measured = samples[warmup:]
    calls: dict[str, int] = {}
    for sample in measured:
        for purpose in sample.get("model_calls", []):
            calls[purpose] = calls.get(purpose, 0) + 1
    prep = summary(s.get("prep_beyond_model_ms") for s in measured)
    complete = sum(1 for s in measured if s["status"] == TurnStatus.COMPLETE)
    return {
        "turns": len(measured),
        "warmup_turns": warmup,
        "complete_turns": complete,
        "prep_beyond_model_ms": prep,
        "story_phase_ms": summary(s.get("phase_ms") for s in measured),
        "model_ms": summary(s.get("model_ms") for s in measured),
        "post_turn_save_ms": summary(s.get("save_ms") for s in measured),
        "steps_ms": {
            step: summary(s.get(f"{step}_ms") for s in measured)
            for step in ("read", "coordinator", "accept_save", "place")
        },
        "model_calls": calls,
        "routes": sorted({s.get("route") or "-" for s in measured}),
        "goal_prep_p50_ms": GOAL_PREP_P50_MS,
        "meets_prep_goal": bool(
            complete == len(measured)
            and prep["p50"] is not None
            and prep["p50"] <= GOAL_PREP_P50_MS
        ),
    }


def run_id() -> str:
    return uuid.uuid4().hex[:8]
