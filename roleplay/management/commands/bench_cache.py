"""``bench_cache``: what the prompt cache saves on the bundled local model.

Time to first token of turn ``--turns`` (10) of a conversation of about ``--tokens`` (4,000)
prompt tokens, with the model's prompt cache on and off, and their ratio (goal: 3x or more
with the cache); ``roleplay.bench.prompt_cache`` says how the conversation is made. Needs
llama-cpp-python and the bundled model; uses the product's threads for the local model
unless ``--threads`` says otherwise.
"""

from __future__ import annotations

import asyncio
import json

from django.core.management.base import BaseCommand, CommandError

from roleplay.bench import prompt_cache
from roleplay.llm.bundled import local_model_available
from roleplay.llm.local_server import default_threads

PER_TURN_TOKENS = 45  # the scripted exchanges the turns before the last one add (cl100k)


class Command(BaseCommand):
    help = "Time to first token of a long conversation's last turn, prompt cache on vs off."

    def add_arguments(self, parser):
        parser.add_argument("--turns", type=int, default=10)
        parser.add_argument("--tokens", type=int, default=4000)
        parser.add_argument("--threads", type=int, default=0, help="0: the product's default")
        parser.add_argument("--cache-mb", type=int, default=256)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, turns, tokens, threads, cache_mb, **options):
        if not local_model_available():
            raise CommandError("llama-cpp-python or the bundled model is not installed")
        if turns < 1 or tokens < 100:
            raise CommandError("--turns must be at least 1 and --tokens at least 100")
        history_tokens = max(100, tokens - PER_TURN_TOKENS * turns)
        common = {"turns": turns, "history_tokens": history_tokens, "threads": threads or None}
        on = asyncio.run(prompt_cache.run(True, cache_mb=cache_mb, **common))
        off = asyncio.run(prompt_cache.run(False, cache_mb=cache_mb, **common))
        report = prompt_cache.report(on, off, threads=threads or default_threads())
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        ttft = report["ttft_ms"]
        self.stdout.write(
            f"turn {report['turn']} of {report['prompt_tokens']} prompt tokens: time to first "
            f"token {ttft['cache_on']} ms with the prompt cache, {ttft['cache_off']} ms "
            f"without ({report['speedup']}x; goal {report['goal_speedup']}x); "
            f"{report['cached_tokens']['cache_on']} tokens served from the cache"
        )
