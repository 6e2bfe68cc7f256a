"""``manage.py bench_prefix --json``: how much of each Actor request a model server can reuse
from the one before it, per capability switched on alone and all on, with the cache-aware
layout (the shipped default) and the classic one (``roleplay.bench.prefix``). A throwaway
``bench-`` tenant holds the run's rows and is deleted at the end.
"""

from __future__ import annotations

import json
import logging

from django.core.management.base import BaseCommand, CommandError

from roleplay.bench import limits
from roleplay.bench.prefix import ARMS, CONTEXT_LIMIT, LAYOUTS, MAX_OUTPUT, TRIGGER

QUIET_LOGGERS = ("httpx", "httpx2", "openai", "roleplay", "memory", "console", "daphne")


class Command(BaseCommand):
    help = "Measure the prompt prefix consecutive Actor requests share, per capability."

    def add_arguments(self, parser):
        parser.add_argument("--turns", type=int, default=12)
        parser.add_argument("--entries", type=int, default=5000)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        with limits.off():  # one player, faster than anyone types
            return self._handle(*args, **options)

    def _handle(self, *args, turns, entries, **options):
        if not 3 <= turns <= 200:
            raise CommandError("--turns 3..200")
        if not 1 <= entries <= 20_000:
            raise CommandError("--entries 1..20000")
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
        from console.bootstrap import migrate_quietly
        from roleplay.bench import prefix
        from roleplay.bench.queue import private_queue
        from roleplay.bench.tenant import delete_bench_tenant
        from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer

        migrate_quietly()
        with ScriptedOpenAIServer(default=Reply.from_callable(prefix.route)) as server:
            bench, arms, set_layout = _world(server.base_url, turns, entries)
            try:
                with private_queue(None) as found:
                    prefix.run_layouts(server, arms, turns, set_layout, found["queue"])
                data = prefix.report(
                    [arm for by_layout in arms.values() for arm in by_layout.values()], turns
                )
            finally:
                delete_bench_tenant(bench)
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2))
            return
        self.stdout.write(f"bench_prefix, {turns} turns an arm (share of the earlier request)")
        for arm, by_layout in data["arms"].items():
            row = ", ".join(
                f"{layout} p50 {f['share_p50']:.0%} p10 {f['share_p10']:.0%}"
                f" (of its stable prefix p50 {f['of_stable_p50']:.0%})"
                for layout, f in by_layout.items()
            )
            self.stdout.write(f"  {arm}: {row}")


def _world(base_url: str, turns: int, entries: int):
    """The bench tenant, one character and scenario per arm, and for each a conversation per
    layout; and the function that switches the Actor's preset to a layout."""
    from console.models import Player
    from memory.configs.services import put_settings
    from memory.entries.services import add_entry
    from roleplay.bench import continuity
    from roleplay.bench.agentic import add_agentic
    from roleplay.bench.prefix import Arm
    from roleplay.bench.tenant import create_bench_tenant
    from roleplay.models import Character, Conversation, Scenario
    from roleplay.presets.services import create_preset
    from roleplay.prompting.default_preset import default_prompt_data
    from worldbook import services as worldbooks
    from worldbook.bench.synthetic import synthetic_book
    from worldbook.engine.schema import BookIn

    bench = create_bench_tenant(0, base_url, warmup=0)
    tenant, actor = bench.tenant, bench.config
    actor.context_limit, actor.max_output_tokens = CONTEXT_LIMIT, MAX_OUTPUT
    actor.save(update_fields=["context_limit", "max_output_tokens"])
    agentic = add_agentic(tenant, actor, base_url, players=0, seed_state=False, prefix="prefix")
    book, _ = worldbooks.create_book(tenant, BookIn.model_validate(synthetic_book(entries)))
    classic = create_preset(tenant, name="Classic layout", prompts=default_prompt_data("classic"))
    compact = {
        "enabled": True,
        "compactorModelConfigId": actor.name,
        "triggerRatio": TRIGGER,
        "keepLastCanonicalGroups": 2,
        "safetyMarginTokens": 256,
        "maxSummaryTokens": 400,
    }
    story = {"enabled": True, "modelConfigId": str(actor.pk)}
    arms: dict[str, dict[str, Arm]] = {}
    for index, name in enumerate(ARMS):
        on = set(ARMS[1:-1]) if name == "all" else {name}
        scenario = Scenario.objects.create(
            tenant=tenant,
            name=f"Bench prefix {name}",
            model_config=actor,
            agentic_v2=agentic.scenario.agentic_v2 if "agentic" in on else None,
            story_v1=story if "story" in on else None,
            compact=compact if "compact" in on else None,
        )
        character = Character.objects.create(
            tenant=tenant,
            name="Bench Keeper",
            description="A lighthouse keeper of the harbor who knows every lantern and canal.",
            first_message="Welcome to the lighthouse.",
            default_scenario=scenario,
        )
        if "memory" not in on:
            put_settings(tenant, {"enabled": False}, character_id=str(character.pk))
        if "worldbook" in on:
            worldbooks.put_bindings(tenant, str(character.pk), [{"book_id": str(book.pk)}])
        arms[name] = {}
        for layout in LAYOUTS:
            player = Player.objects.create(
                tenant=tenant,
                external_id=f"bench-prefix-{name}-{layout}",
                display_name=f"Player {name} {layout}",
            )
            conversation = Conversation.objects.create(
                tenant=tenant, player=player, character=character, scenario=scenario
            )
            if "memory" in on:  # something for memory to place: a stated preference
                add_entry(tenant, player, kind="preference", scope="shared",
                          category_key="length", content="Keep replies brief.")  # fmt: skip
            tag = chr(ord("A") + index) + ("C" if layout == "classic" else "W")
            player = continuity.Player(conversation, tag, turns)
            arms[name][layout] = Arm(name, layout, player, agentic="agentic" in on)

    def set_layout(layout: str) -> None:
        actor.preset = classic if layout == "classic" else None
        actor.save(update_fields=["preset"])

    return bench, arms, set_layout
