"""A throwaway tenant for one benchmark run: players, a character, their conversations.

Everything hangs off one ``Tenant`` row whose name starts with ``bench-``; deleting it
cascades to every row the run made (messages, turns, model calls included).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction

from console.models import Player, Tenant
from roleplay.models import Character, Conversation, ModelConfig

PREFIX = "bench-"


@dataclass
class BenchTenant:
    tenant: Tenant
    config: ModelConfig
    conversations: list[Conversation]
    warmup: list[Conversation]


@transaction.atomic
def create_bench_tenant(players: int, base_url: str, *, warmup: int = 1) -> BenchTenant:
    """``players`` measured conversations plus ``warmup`` unmeasured ones, one player each,
    all answered by a default model config pointing at ``base_url``."""
    tenant = Tenant.objects.create(name=f"{PREFIX}{uuid.uuid4().hex[:12]}")
    config = ModelConfig.objects.create(
        tenant=tenant,
        name="bench-scripted",
        provider="openai_compatible",
        model="scripted-model",
        base_url=base_url,
        context_limit=8192,
        max_output_tokens=512,
        timeout_ms=30_000,
        is_default=True,
    )
    character = Character.objects.create(
        tenant=tenant,
        name="Bench Keeper",
        description="A lighthouse keeper who answers every question at length.",
        first_message="Welcome to the lighthouse.",
    )
    conversations = []
    for index in range(players + warmup):
        player = Player.objects.create(
            tenant=tenant, external_id=f"bench-{index}", display_name=f"Player {index}"
        )
        conversations.append(
            Conversation.objects.create(tenant=tenant, player=player, character=character)
        )
    return BenchTenant(tenant, config, conversations[warmup:], conversations[:warmup])


def delete_bench_tenant(bench: BenchTenant) -> None:
    """Remove the run's tenant and, by cascade, everything the run stored."""
    Tenant.objects.filter(pk=bench.tenant.pk, name__startswith=PREFIX).delete()
