"""What ``bench_prompt`` measures: the Actor prompt of one conversation, in-process.

A throwaway ``bench-`` tenant (deleted afterwards) holds a character bound to a synthetic
5,000-entry worldbook, a conversation with 200 stored messages and a 20-prompt preset (the
shipped default plus prompts with macros, one at a depth). Each sample is a turn's context
read and prompt assembly, timed by stage: ``read`` (the conversation, history, model config
and preset), ``worldbook`` (the hook: bindings, selection for this turn's layout),
``assembly`` (preset, macros, placement and the token budget).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from console.models import Player, Tenant
from memory import services as message_store
from roleplay.bench.memory_warm import warm
from roleplay.bench.stats import summary
from roleplay.memory_plugin import context as memory_context
from roleplay.memory_plugin import packs as memory_pack_context
from roleplay.models import Character, Conversation, ModelConfig, Turn
from roleplay.presets import services as presets
from roleplay.prompting.default_preset import default_preset
from roleplay.turns import context
from roleplay.turns.plugin import PLUGINS
from roleplay.worldbook_plugin.context import apply as worldbook_hook
from worldbook import services as worldbooks
from worldbook.bench.synthetic import synthetic_book
from worldbook.engine.schema import BookIn

PREFIX = "bench-"


@dataclass
class PromptBench:
    tenant: Tenant
    conversation: Conversation
    turn: Turn


def extra_prompts(count: int) -> list[dict]:
    """``count`` prompts with macros for the preset, the last one at a depth."""
    out = []
    for i in range(count):
        prompt = {
            "identifier": f"bench{i}",
            "name": f"Bench prompt {i}",
            "content": f"Rule {i}: {{{{char}}}} speaks to {{{{user}}}} at {{{{time}}}}; "
            f"roll {{{{roll::1d20}}}}; mood {{{{getvar::mood}}}}.",
        }
        if i == count - 1:
            prompt["injection"] = {"position": "at_depth", "depth": 3, "order": 10}
        out.append(prompt)
    return out


def create(history: int, entries: int, prompts: int) -> PromptBench:
    tenant = Tenant.objects.create(name=f"{PREFIX}{uuid.uuid4().hex[:12]}")
    base = [p.model_dump(mode="json") for p in default_preset().prompts]
    actor = [p for p in base if p["injection"]["position"] != "none"]
    others = [p for p in base if p["injection"]["position"] == "none"]
    extra = extra_prompts(max(prompts - len(actor), 0))
    cut = next(i for i, p in enumerate(actor) if p["identifier"] == "chatHistory")
    preset = presets.create_preset(
        tenant, name="bench", prompts=actor[:cut] + extra + actor[cut:] + others
    )
    config = ModelConfig.objects.create(
        tenant=tenant,
        name="bench",
        provider="openai_compatible",
        model="bench",
        base_url="http://127.0.0.1:9/v1",
        context_limit=32768,
        max_output_tokens=512,
        preset=preset,
        is_default=True,
    )
    character = Character.objects.create(
        tenant=tenant,
        name="Bench Keeper",
        description="A lighthouse keeper of the harbor who knows every lantern and canal.",
        personality="dry, observant",
        scenario="A foggy evening at the harbor.",
        first_message="Welcome to the lighthouse.",
        example_dialogues="<START>\nBench Keeper: Mind the steps.",
        model_config=config,
    )
    player = Player.objects.create(tenant=tenant, external_id="bench", display_name="Ann")
    conversation = Conversation.objects.create(tenant=tenant, player=player, character=character)
    book, _ = worldbooks.create_book(tenant, BookIn.model_validate(synthetic_book(entries)))
    worldbooks.put_bindings(tenant, str(character.id), [{"book_id": str(book.id)}])
    for i in range(history):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"Message {i} about the harbor lantern guild tower and canal {i}."
        message_store.save_message(tenant, conversation.session_id, role=role, content=text)
    last = message_store.save_message(
        tenant, conversation.session_id, role="user", content="Tell me about the harbor tower."
    )
    turn = Turn.objects.create(
        tenant=tenant,
        conversation=conversation,
        client_message_id="bench",
        user_message_id=last.id,
        assistant_message_id=uuid.uuid4(),
        status="complete",
    )
    warm(conversation, last.content)
    return PromptBench(tenant, conversation, turn)


def delete(bench: PromptBench) -> None:
    bench.tenant.delete()


def sample(bench: PromptBench) -> dict[str, float]:
    """One turn's context and prompt, timed by stage (ms)."""
    with PLUGINS.using(()):  # the read hooks are timed on their own below
        started = time.perf_counter()
        ctx = context.load_context(bench.turn)
        read = time.perf_counter()
        worldbook_hook(ctx, bench.conversation)
        selected = time.perf_counter()
        memory_context.apply(ctx, bench.conversation)
        memory_pack_context.apply(ctx, bench.conversation)
        remembered = time.perf_counter()
        ctx.variables["mood"] = "calm"
        prompt = context.actor_prompt(ctx)
        done = time.perf_counter()
    assert prompt.messages and ctx.trace["worldbook"]["selected"] is not None
    return {
        "read_ms": (read - started) * 1000,
        "worldbook_ms": (selected - read) * 1000,
        "memory_ms": (remembered - selected) * 1000,
        "assembly_ms": (done - remembered) * 1000,
        "pack": ctx.trace.get("memory_pack", {}).get("status", "none"),
        "total_ms": (done - started) * 1000,
        "blocks": len(ctx.blocks),
        "messages": len(prompt.messages),
        "history_messages": len(ctx.history),
        "preset_prompts": len(ctx.preset.actor_prompts()),
    }


def report(samples: list[dict[str, float]]) -> dict:
    stages = ("read_ms", "worldbook_ms", "memory_ms", "assembly_ms")
    totals = [s["total_ms"] for s in samples]
    medians = {stage: summary([s[stage] for s in samples])["p50"] for stage in stages}
    total_p50 = summary(totals)["p50"] or 1.0
    last = samples[-1]
    return {
        "samples": len(samples),
        "total_ms": summary(totals),
        "stages_ms": {stage: summary([s[stage] for s in samples]) for stage in stages},
        "stage_share_of_p50": {s: round((medians[s] or 0) / total_p50, 3) for s in stages},
        "history_messages": last["history_messages"],
        "preset_prompts": last["preset_prompts"],
        "worldbook_blocks": last["blocks"],
        "prompt_messages": last["messages"],
        "pack_reads": {
            s["pack"]: sum(1 for x in samples if x["pack"] == s["pack"]) for s in samples
        },  # fmt: skip
        "targets": {"total_p50_ms": 10.0, "met": (summary(totals)["p50"] or 0) <= 10.0},
        "memory_target": {
            "memory_p50_ms": 2.0,
            "met": (medians["memory_ms"] or 0) <= 2.0,
        },
    }
