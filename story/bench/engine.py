"""The engine's own time per story turn, with no model and no database: a world at full
capacity (3 backgrounds, 5 undercurrents, a seed queue) and a narrative with a 7-goal cycle,
driven turn after turn through what the coordinator does between the player's message and
the Actor, and after it: route the request, restore the pending prepared turn, capture the
evidence, accept the prose into the world (with a world proposal), settle the event when it
ends, prepare the next turn (deal, stage), render the Actor's block and check the
envelope's size. The models' answers are fixed, valid proposals.
"""

from __future__ import annotations

import statistics
import time

from story.engine import evidence, size
from story.engine.advance import advance
from story.engine.deal import DealState
from story.engine.goals import Goal
from story.engine.narrative import Narrative, StoryLine
from story.engine.policy import NarrativePolicy, WorldPolicy
from story.engine.prepare import Prepared, prepare_turn, restore
from story.engine.rng import Rng
from story.engine.route import HistoryMessage, decide
from story.engine.settle import settle_event
from story.engine.stage import render
from story.engine.world import Background, Foreground, Seed, Undercurrent, World

WP, NP = WorldPolicy(), NarrativePolicy()
PROSE = "Lia turns the copper key in the lamplight; the crest is the old archive's. " * 12


def opening(seed: int = 731) -> tuple[World, Narrative]:
    world = World(
        foreground=Foreground("w1", "Lia checks the copper key"),
        backgrounds=[
            Background(f"w{i}", f"off-screen matter {i}", "patrol", 2 + i) for i in (2, 3, 4)
        ],
        undercurrents=[
            Undercurrent(f"w{i}", f"hidden development {i}", "guild") for i in range(5, 10)
        ],
        seedQueue=[Seed(f"w{i}", f"seed {i}", "caravan") for i in range(10, 16)],
        protectedOwners=["Lia"],
        nextId=16,
        rng=Rng.seeded(seed),
    )
    narrative = Narrative(
        main=StoryLine("the old archive", "learn what the key opens", "discovery"),
        sub=StoryLine("trust", "win Lia's help", "warmth"),
    )
    narrative.cycle.pending = [
        Goal(
            f"g{i}",
            "main" if i % 3 else "sub",
            ("reveal", "conflict", "relationship")[i % 3],
            f"goal {i}",
        )
        for i in range(1, 8)
    ]
    narrative.cycle.needPlan, narrative.nextGoal = False, 8
    return world, narrative


def run(turns: int) -> dict:
    """Drive ``turns`` turns; the figures."""
    world, narrative = opening()
    prepared = prepare_turn("t0", world, narrative, {"type": "free", "text": "I arrive."}, WP, NP)
    history = [HistoryMessage("u0", "user", "I arrive."), HistoryMessage("a0", "assistant", PROSE)]
    event_evidence: list[evidence.Evidence] = []
    accepted: list[str] = []
    timings: list[float] = []
    settled = 0
    for n in range(1, turns + 1):
        user = f"I ask Lia about the crest, turn {n}."
        started = time.perf_counter()
        envelope = {
            "character": "c1",
            "sourceWatermark": 2 * n - 1,
            "pendingActor": {
                "messageId": f"a{n - 1}",
                "userMessageId": f"u{n - 1}",
                "userContentHash": evidence.digest(history[-2].text),
            },
        }
        route = decide(
            envelope,
            kind="chat",
            character_id="c1",
            history=history,
            user_text=user,
            source_position=2 * n,
        )
        if route.route != "accept_then_prepare":
            raise RuntimeError(f"the bench's history went astray: {route}")
        saved = restore(Prepared.from_json(prepared.as_json()), WP, NP)
        event_evidence += [
            evidence.capture(f"u{n - 1}", history[-2].text, "user_action", 2 * n - 2),
            evidence.capture(f"a{n - 1}", PROSE, "prose", 2 * n - 1),
        ]
        world = World.from_json(saved.world)
        result = advance(
            world,
            saved.turn_id,
            accepted,
            _proposal(world, n),
            WP,
        )
        world = result.world
        accepted = (accepted + [saved.turn_id])[-64:]
        world.pendingInjections = world.pendingInjections[-4:]
        if any(
            e["type"] in ("foreground_ended", "foreground_awaiting_successor")
            for e in result.events
        ):
            kinds = {e.message_id: e.kind for e in event_evidence}
            open_goals = [g.id for g in narrative.cycle.pending if not g.done][:1]
            proposal = {
                "outcome": "settled",
                "completedGoals": [{"id": g, "evidence": [f"a{n - 1}"]} for g in open_goals],
                "progress": {
                    "main": {"advance": True, "evidence": [f"a{n - 1}"]},
                    "sub": {"advance": False},
                },
                "direction": None,
            }
            narrative = settle_event(narrative, f"e{settled}", proposal, kinds, NP).narrative
            settled += 1
            event_evidence = []
            world.pendingNextForeground = {"id": world.new_id(), "title": f"scene {n}"}
        prepared = prepare_turn(f"t{n}", world, narrative, route.action or {}, WP, NP)
        narrative.deal = DealState.from_json(prepared.deal_state)
        block = render(prepared.projection)
        envelope_bytes = size.check_size(
            {
                "world": prepared.world,
                "narrative": narrative.as_json(),
                "pendingActor": prepared.as_json(),
                "events": [e.as_json() for e in event_evidence],
            },
            60_000,
        )
        timings.append((time.perf_counter() - started) * 1000)
        history += [
            HistoryMessage(f"u{n}", "user", user),
            HistoryMessage(f"a{n}", "assistant", PROSE),
        ]
        history = history[-40:]
    return {
        "turns": turns,
        "engine_ms_per_turn": _summary(timings),
        "goal_engine_p50_ms": 5.0,
        "meets_engine_goal": _summary(timings)["p50"] <= 5.0,
        "settled_events": settled,
        "stage_block_chars": len(block),
        "envelope_bytes": envelope_bytes,
        "world_round": world.round,
        "dice_drawn": world.rng.draws,
    }


def _proposal(world: World, n: int) -> dict:
    """The world model's answer: a consequence each turn, and the pending invitation
    delivered (the undercurrents move on)."""
    return {
        "consequences": [f"consequence {n}"],
        "delivered": world.pendingSignalDemand is not None,
    }


def _summary(values: list[float]) -> dict:
    ordered = sorted(values)
    cut = (
        statistics.quantiles(ordered, n=100, method="inclusive")
        if len(ordered) > 1
        else ordered * 99
    )
    return {
        "p50": round(statistics.median(ordered), 3),
        "p95": round(cut[94], 3),
        "max": round(ordered[-1], 3),
    }
