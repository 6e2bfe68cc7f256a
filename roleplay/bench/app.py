"""The player app's figures (``bench_app``): pages' server time in a bench tenant.

Each figure is a function in :data:`FIGURES` that takes the :class:`AppBench` (its tenant,
player, signed-in client) and returns its numbers; ``bench_app`` runs every one and prints
them together. A page's figure is measured through Django's request handler in this process
(middleware, view, queries, template: the server's time, no network): ``cold`` is the first
request of a fresh process (``bench_app --probe``), ``warm`` the percentiles after it.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.test import Client

from console.models import Tenant
from memory.bench.stats import percentile
from memory.models import Message
from roleplay.models import Character, ContentRating, Conversation, Visibility

PREFIX = "bench-app-"
GOALS_MS = {"library_search_p50": 30.0, "my_chats_p50": 50.0}
WORDS = (
    "knight mage rogue pirate detective vampire android librarian dragon witch samurai "
    "ranger bard healer necromancer spy merchant captain alchemist oracle ghost robot "
    "princess soldier scholar hunter monk ninja cyborg elf dwarf orc fairy angel demon "
    "teacher doctor chef barista hacker pilot sailor farmer"
).split()
TAGS = (
    "fantasy scifi romance horror mystery comedy adventure historical modern slice-of-life "
    "anime western noir cyberpunk steampunk"
).split()
QUERIES = [
    "dragon",
    "knight mage",
    '"space pirate"',
    "witch -horror",
    "detective or spy",
    "cyberpunk",
    "librarian ghost",
    "captain",
    "robot",
    "elf ranger",
]


@dataclass
class AppBench:
    tenant: Tenant
    account: object
    client: Client
    characters: int
    conversations: int
    samples: int
    cold: bool = True  # whether ``cold`` starts fresh processes (they use this database)
    extra: dict = field(default_factory=dict)


def create(characters: int, conversations: int, samples: int, seed: int = 7) -> AppBench:
    """A bench tenant with ``characters`` listed ones (and a tenth as many private ones) and
    a signed-in player with ``conversations`` chats of two messages each."""
    from roleplay.accounts import services as accounts

    rng = random.Random(seed)
    with transaction.atomic():
        tenant = Tenant.objects.create(name=f"{PREFIX}{uuid.uuid4().hex[:12]}")
        rows = [_character(tenant, rng, i, Visibility.LISTED) for i in range(characters)]
        rows += [_character(tenant, rng, i, Visibility.PRIVATE) for i in range(characters // 10)]
        Character.objects.bulk_create(rows, batch_size=1000)
    account = accounts.create_account(
        tenant, email="bench@example.com", password=uuid.uuid4().hex, display_name="Bench"
    )
    with transaction.atomic():
        _chats(tenant, account.player, rows[: max(1, min(50, len(rows)))], conversations)
    with connection.cursor() as cursor:  # the statistics a live database has by now
        cursor.execute("ANALYZE roleplay_character, roleplay_conversation, memory_message")
    settings.PLAYER_APP_TENANT = tenant.name
    client = Client()
    client.force_login(account.user, backend="roleplay.accounts.backend.PlayerEmailBackend")
    return AppBench(tenant, account, client, characters, conversations, samples)


def _character(tenant, rng: random.Random, index: int, visibility: str) -> Character:
    words = rng.sample(WORDS, 3)
    return Character(
        tenant=tenant,
        name=f"{words[0].title()} {words[1].title()} {index}",
        tags=rng.sample(TAGS, 3),
        creator_notes=f"A {words[2]} who was once a {words[1]}; " + " ".join(rng.sample(WORDS, 8)),
        description="Bench character.",
        first_message="Hello.",
        visibility=visibility,
        content_rating=ContentRating.NSFW if index % 9 == 0 else ContentRating.SFW,
    )


def _chats(tenant, player, characters: list[Character], count: int) -> None:
    made = Conversation.objects.bulk_create(
        [
            Conversation(tenant=tenant, player=player, character=characters[i % len(characters)])
            for i in range(count)
        ],
        batch_size=1000,
    )
    messages = []
    for i, conversation in enumerate(made):
        for turn, role in enumerate(("user", "assistant")):
            messages.append(
                Message(
                    tenant=tenant,
                    session_id=str(conversation.pk),
                    role=role,
                    content=f"{role} line {i}",
                    ts=1_700_000_000_000 + i * 10 + turn,
                )
            )
    Message.objects.bulk_create(messages, batch_size=2000)


def delete(bench: AppBench) -> None:
    """The tenant and everything it holds (the player's user too)."""
    user = bench.account.user
    Message.objects.filter(tenant=bench.tenant).delete()
    bench.tenant.delete()
    user.delete()


def timed(client: Client, path: str) -> float:
    start = time.perf_counter()
    response = client.get(path)
    elapsed = (time.perf_counter() - start) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"{path} answered {response.status_code}")
    return elapsed


def warm(bench: AppBench, paths: list[str]) -> dict:
    for path in paths[:3]:
        timed(bench.client, path)
    times = [timed(bench.client, paths[i % len(paths)]) for i in range(bench.samples)]
    return {"p50": percentile(times, 50), "p95": percentile(times, 95), "n": len(times)}


def cold(bench: AppBench, path: str) -> float | None:
    """The first request of a fresh process (``bench_app --probe``), in milliseconds."""
    if not bench.cold:
        return None
    command = [sys.executable, "manage.py", "bench_app", "--probe", path]
    command += ["--tenant", bench.tenant.name, "--user", str(bench.account.user.pk)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])["ms"]
    except (ValueError, IndexError, KeyError):
        return None


def probe(path: str, tenant: str, user_id: str) -> dict:
    """One request in this (fresh) process: what ``cold`` reads."""
    from django.contrib.auth import get_user_model

    settings.PLAYER_APP_TENANT = tenant
    client = Client()
    user = get_user_model().objects.get(pk=user_id)
    client.force_login(user, backend="roleplay.accounts.backend.PlayerEmailBackend")
    return {"ms": round(timed(client, path), 2)}


def library_search(bench: AppBench) -> dict:
    """The library searched (websearch queries, a tag filter among them), as a player who
    confirmed their age sees it (all listed characters)."""
    from django.utils import timezone

    type(bench.account).objects.filter(pk=bench.account.pk).update(age_confirmed_at=timezone.now())
    paths = [f"/app/library/?q={q}" for q in QUERIES] + ["/app/library/?tag=noir"]
    return {
        "characters": bench.characters,
        "cold_ms": cold(bench, paths[0]),
        "warm_ms": warm(bench, paths),
        "goal_p50_ms": GOALS_MS["library_search_p50"],
    }


def my_chats(bench: AppBench) -> dict:
    """My chats' first page for a player with ``conversations`` chats."""
    return {
        "conversations": bench.conversations,
        "cold_ms": cold(bench, "/app/chats/"),
        "warm_ms": warm(bench, ["/app/chats/"]),
        "goal_p50_ms": GOALS_MS["my_chats_p50"],
    }


def quota_check(bench: AppBench) -> dict:
    """The quota check's cost per turn and its exactness under 50 concurrent players
    (``roleplay.quotas.bench``: goal p50 ≤ 1 ms, 0 lost, 0 double-counted)."""
    from roleplay.quotas.bench import quota_figures

    return quota_figures(players=50)


# Figure name → its measure; a new figure of the player app is one more entry.
FIGURES: dict[str, Callable[[AppBench], dict]] = {
    "library_search": library_search,
    "my_chats": my_chats,
    "quota_check": quota_check,
}


def baseline(bench: AppBench) -> dict:
    """A small page of the same app (the player's personas: a handful of tiny queries), so
    a figure reads against what any page costs on this machine now (``ratio``)."""
    return {"warm_ms": warm(bench, ["/app/personas/"])}


def run(bench: AppBench, names: list[str] | None = None) -> dict:
    chosen = names or list(FIGURES)
    base = baseline(bench)
    figures = {name: FIGURES[name](bench) for name in chosen}
    for figure in figures.values():
        if "warm_ms" in figure and base["warm_ms"]["p50"]:
            figure["ratio_to_baseline_p50"] = round(
                figure["warm_ms"]["p50"] / base["warm_ms"]["p50"], 2
            )
    met = {
        name: (figure["warm_ms"]["p50"] or 0) <= figure["goal_p50_ms"]
        for name, figure in figures.items()
        if "goal_p50_ms" in figure and "warm_ms" in figure
    }
    return {"baseline_page": base, "figures": figures, "goals_met": met}
