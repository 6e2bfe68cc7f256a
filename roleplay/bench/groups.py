"""What ``bench_groups`` measures: what a group adds to a turn's path before the model call.

A throwaway ``bench-`` tenant (deleted afterwards) holds two conversations with the same
history of ``history`` messages: a one-character chat and a group of ``members`` characters
whose replies name their speakers. Each sample times the group's work per speaker (choose
the speaker, read its group, read the turn's context, assemble the Actor prompt) and the
same read and assembly of the one-character chat; the overhead is their difference."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from console.models import Player, Tenant
from memory import services as message_store
from roleplay.bench.stats import summary
from roleplay.groups import services as groups
from roleplay.groups import speaking
from roleplay.models import Character, Conversation, ModelConfig, Turn, TurnKind
from roleplay.turns import context
from roleplay.turns.plugin import PLUGINS

PREFIX = "bench-"
GOAL_P50_MS = 20.0


@dataclass
class GroupBench:
    tenant: Tenant
    single: Turn
    group: Turn


def create(history: int, members: int) -> GroupBench:
    tenant = Tenant.objects.create(name=f"{PREFIX}{uuid.uuid4().hex[:12]}")
    ModelConfig.objects.create(
        tenant=tenant, name="bench", provider="openai_compatible", model="bench",
        base_url="http://127.0.0.1:9/v1", context_limit=32768, max_output_tokens=512,
        is_default=True,
    )  # fmt: skip
    cast = [
        Character.objects.create(
            tenant=tenant,
            name=f"Keeper {i}",
            description=f"Keeper {i} of the harbor lamps.",
            personality="dry",
            scenario="A foggy evening at the harbor.",
        )  # fmt: skip
        for i in range(members)
    ]
    player = Player.objects.create(tenant=tenant, external_id="bench", display_name="Ann")
    turns = []
    for group in (False, True):
        conversation = Conversation.objects.create(
            tenant=tenant, player=player, character=cast[0], group_mode="natural"
        )
        if group:
            for character in cast[1:]:
                groups.add_member(conversation, character)
        _history(conversation, cast if group else cast[:1], history)
        turns.append(
            Turn.objects.create(
                tenant=tenant,
                conversation=conversation,
                client_message_id="bench",
                kind=TurnKind.GROUP,
                assistant_message_id=uuid.uuid4(),
                status="complete",
                speaker=cast[-1] if group else None,
            )  # fmt: skip
        )
    return GroupBench(tenant, turns[0], turns[1])


def _history(conversation: Conversation, cast: list[Character], count: int) -> None:
    for i in range(count):
        speaker = cast[(i // 2) % len(cast)]
        metadata = {"speaker": {"id": str(speaker.pk), "name": speaker.name}}
        message_store.save_message(
            conversation.tenant, conversation.session_id,
            role="user" if i % 2 == 0 else "assistant",
            content=f"Message {i} about the harbor lamps, Keeper {i % len(cast)}.",
            metadata=metadata if len(cast) > 1 and i % 2 else None,
        )  # fmt: skip


def delete(bench: GroupBench) -> None:
    bench.tenant.delete()


def sample(bench: GroupBench) -> dict[str, float]:
    """One speaker's turn path in the group and in the one-character twin (ms)."""
    with PLUGINS.using(()):  # the plug-ins' reads are the same in both
        conversation = Conversation.objects.select_related("tenant", "character").get(
            pk=bench.group.conversation_id
        )
        started = time.perf_counter()
        group = speaking.choose(conversation, TurnKind.GROUP, seed=str(time.perf_counter()))
        chosen = time.perf_counter()
        ctx = context.load_context(bench.group, group=group)
        group_prompt = context.actor_prompt(ctx)
        group_done = time.perf_counter()
        single = context.load_context(bench.single)
        single_prompt = context.actor_prompt(single)
        single_done = time.perf_counter()
    assert group_prompt.messages and single_prompt.messages and ctx.group is not None
    group_ms = (group_done - started) * 1000
    single_ms = (single_done - group_done) * 1000
    return {
        "choose_ms": (chosen - started) * 1000,
        "group_ms": group_ms,
        "single_ms": single_ms,
        "overhead_ms": group_ms - single_ms,
        "history_messages": len(ctx.history),
    }


def report(samples: list[dict[str, float]], members: int) -> dict:
    overhead = summary([s["overhead_ms"] for s in samples])
    return {
        "samples": len(samples),
        "members": members,
        "history_messages": samples[-1]["history_messages"],
        "choose_ms": summary([s["choose_ms"] for s in samples]),
        "group_turn_ms": summary([s["group_ms"] for s in samples]),
        "single_turn_ms": summary([s["single_ms"] for s in samples]),
        "overhead_per_speaker_ms": overhead,
        "goal": {"overhead_p50_ms": GOAL_P50_MS, "met": (overhead["p50"] or 0) <= GOAL_P50_MS},
    }
