"""``manage.py bench_continuity --turns 200 --json``: do characters remember?

Two players chat beside each other with a character whose scenario has Agent V2 (context
governance ``enforce``), Compact and memory on, in a small window, over the real socket path,
against a scripted model server whose roles carry forward honestly the fact markers they are
given (``roleplay.bench.continuity``). Prints the facts planted and present at their cue with
the layer that carried each, the retracted facts (a rollback, an edit) seen later with the
layer that carried each, leaks between the players, prompt tokens per turn before and after
the first compaction, compactor calls, checkpoint versions, and the time to first delta with
Compact on (turns where no compaction is due) against a conversation with Compact off. A
throwaway ``bench-`` tenant holds the run's rows and is deleted at the end.

``--layout classic`` gives the Actor the shipped default preset without its ``turnContext``
marker (docs/prompt.md, "Cache-aware layout"): the per-turn blocks go where each asks, near
the character, as before the cache-aware layout; the default is the cache-aware layout.
"""

from __future__ import annotations

import asyncio
import json
import logging

from django.core.management.base import BaseCommand, CommandError

from roleplay.bench import limits

QUIET_LOGGERS = ("httpx", "httpx2", "openai", "roleplay", "memory", "console", "daphne")
CONTEXT_LIMIT, MAX_OUTPUT, SAFETY, TRIGGER = 3072, 256, 256, 0.6


class Command(BaseCommand):
    help = (
        "Play a long scripted chat with Compact, Agent V2 and memory on; print what was remembered."
    )

    def add_arguments(self, parser):
        parser.add_argument("--turns", type=int, default=200)
        parser.add_argument("--baseline-turns", type=int, default=None)
        parser.add_argument("--json", action="store_true")
        parser.add_argument(
            "--layout",
            choices=("cache_aware", "classic"),
            default="cache_aware",
            help="the Actor's prompt layout (the shipped default is cache_aware)",
        )

    def handle(self, *args, **options):
        with limits.off():  # one player, faster than anyone types
            return self._handle(*args, **options)

    def _handle(self, *args, turns, baseline_turns, layout, **options):
        if not 20 <= turns <= 2000:
            raise CommandError("--turns 20..2000")
        baseline_turns = min(turns, 60) if baseline_turns is None else baseline_turns
        if not 1 <= baseline_turns <= turns:
            raise CommandError("--baseline-turns 1..--turns")
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
        from console.bootstrap import migrate_quietly
        from roleplay.bench import continuity
        from roleplay.bench.continuity_script import continuity_reply
        from roleplay.bench.queue import private_queue
        from roleplay.bench.tenant import delete_bench_tenant
        from roleplay.llm.scripted_server import ScriptedOpenAIServer

        migrate_quietly()
        with ScriptedOpenAIServer(default=continuity_reply()) as server:
            bench, conversations = _world(server.base_url, layout)
            try:
                players = [
                    continuity.Player(conversations[0], "A", turns),
                    continuity.Player(conversations[1], "B", turns),
                ]
                baseline = continuity.Player(conversations[2], "C", baseline_turns)
                run = continuity.Run(server, "scripted-model", turns)
                with private_queue():
                    asyncio.run(continuity.run_all(run, players, baseline))
                data = continuity.report(
                    players, baseline, CONTEXT_LIMIT - MAX_OUTPUT - SAFETY, _counts(bench.tenant)
                )
                data["layout"] = layout
            finally:
                delete_bench_tenant(bench)
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2))
            return
        goal = data["goal"]
        self.stdout.write(
            f"bench_continuity, {turns} turns × {data['players']} players: "
            f"{data['facts_present_at_cue']}/{data['facts_planted']} facts present at their cue "
            f"(layers {', '.join(data['layers_used'])}); leaks {data['leaks']}; retracted seen "
            f"later {len(data['retracted_seen_later'])}, edited away seen later "
            f"{len(data['edited_away_seen_later'])}; tokens after the first compaction "
            f"{data['prompt_tokens']['after_first_compaction']}; compactor calls "
            f"{data['compactor_calls']}; goal {goal}"
        )


def _world(base_url: str, layout: str = "cache_aware"):
    """The bench tenant, its Agent V2 + Compact scenario, and three conversations (two
    players and one with Compact off); the Actor's preset has ``layout``."""
    from roleplay.bench.agentic import add_agentic
    from roleplay.bench.tenant import create_bench_tenant
    from roleplay.models import Scenario
    from roleplay.presets.services import create_preset
    from roleplay.prompting.default_preset import default_prompt_data

    bench = create_bench_tenant(0, base_url, warmup=0)
    actor = bench.config
    actor.context_limit, actor.max_output_tokens = CONTEXT_LIMIT, MAX_OUTPUT
    if layout == "classic":
        actor.preset = create_preset(
            bench.tenant, name="Classic layout", prompts=default_prompt_data("classic")
        )
    actor.save(update_fields=["context_limit", "max_output_tokens", "preset"])
    agentic = add_agentic(bench.tenant, actor, base_url, players=3, seed_state=False, prefix="cont")
    scenario = agentic.scenario
    plain = Scenario.objects.create(
        tenant=bench.tenant,
        name="Bench continuity without Compact",
        model_config=actor,
        agentic_v2=scenario.agentic_v2,
    )
    scenario.agentic_v2 = {**scenario.agentic_v2, "contextGovernance": {"mode": "enforce"}}
    scenario.compact = {
        "enabled": True,
        "compactorModelConfigId": actor.name,
        "triggerRatio": TRIGGER,
        "keepLastCanonicalGroups": 2,
        "safetyMarginTokens": SAFETY,
        "maxSummaryTokens": 600,
    }
    scenario.save(update_fields=["agentic_v2", "compact"])
    baseline = agentic.conversations[2]
    baseline.scenario = plain
    baseline.save(update_fields=["scenario"])
    return bench, agentic.conversations


def _counts(tenant) -> dict:
    from roleplay.models import CompactCheckpoint, ModelCall, Turn

    traces = Turn.objects.filter(tenant=tenant).values_list("trace__compact", flat=True)
    compacted = [t for t in traces if t and t.get("outcome") == "compacted"]
    layouts = Turn.objects.filter(tenant=tenant).values_list("trace__prompt__layout", flat=True)
    return {
        "prompt_layouts": sorted({layout for layout in layouts if layout}),
        "compactions": len(compacted),
        "compactions_adopting_a_prepared_checkpoint": sum(
            1 for t in compacted if t.get("prepared")
        ),
        "preparations_sent": sum(1 for t in traces if t and (t.get("ahead") or {}).get("sent")),
        "compactor_calls": ModelCall.objects.filter(tenant=tenant, purpose="compactor").count(),
        "checkpoint_versions": CompactCheckpoint.objects.filter(tenant=tenant).count(),
        "invalidated_checkpoints": CompactCheckpoint.objects.filter(
            tenant=tenant, status="invalidated"
        ).count(),
    }
