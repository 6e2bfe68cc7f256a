"""Agent V2 in the benchmarks: the scripted answers of each role and the bench tenant's
Agent V2 scenario.

The roles' model configs all point at the one scripted model server, each with a model name
of its own, and the server answers by model name (:func:`route`), the happy path:

- the orchestrator picks ``manage_callbacks`` in phase 1 and ``update_director_state`` in
  phase 2 (when its request carries the specialists' results);
- a specialist answers a line of text;
- the Director writes a valid state (:func:`state_text`) tagged with a hash of its request,
  whose materials hold the turn number and the revision it read: a new state every turn,
  so every run commits a new revision;
- any other model (the Actor's ``scripted-model``) gets the benchmark's fixed reply.

:func:`add_agentic` adds to a bench tenant (``roleplay.bench.tenant``) the role configs, a
scenario with Agent V2 on whose Actor is the tenant's default config (so the Actor's model
and reply are those of the runs without Agent V2), a character like the bench one with that
scenario as its default, and conversations on it. With ``seed_state`` each conversation
starts with a committed state of :data:`STATE_CHARS` characters and a few ledger entries,
so the Actor places a real continuity block, not the empty default note.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from console.models import Player
from roleplay.agentic.engine import ledger
from roleplay.llm.scripted_server import Reply
from roleplay.models import Character, Conversation, ModelConfig, Scenario
from roleplay.prompting.director_state import DIRECTOR_STATE_HEADER, DIRECTOR_STATE_SECTIONS
from roleplay.scenarios.config import SPECIALISTS

ROLE_MODELS = {
    "orchestrator": "orchestrator-model",
    "specialist": "specialist-model",
    "director": "director-model",
    "autoreply": "autoreply-model",
}
# A mid-sized state (a scenario allows up to 8,000 characters).
STATE_CHARS = 3000
SPECIALIST_TEXT = "Open: the user promised to return the lantern key to the keeper by dawn."
SEED_LEDGER = 6


def state_text(tag: str, length: int = STATE_CHARS) -> str:
    """A valid Director state of ``length`` characters, its sections marked with ``tag``."""
    body = "\n".join(f"{section}: {tag} notes." for section in DIRECTOR_STATE_SECTIONS)
    text = f"{DIRECTOR_STATE_HEADER}\n{body}\n"
    filler = "Facts kept. " * ((length - len(text)) // 12 + 1)
    return (text + filler)[:length].rstrip() + "."


def _phase(request: dict) -> int:
    """2 when the orchestrator's request carries the specialists' results, else 1."""
    return 2 if any(m.get("role") == "tool" for m in request.get("messages") or []) else 1


def _tool_call(name: str, reason: str) -> dict[str, Any]:
    return {"name": name, "arguments": {"reason": reason}}


def route(request: dict) -> Reply:
    """The scripted answer to one chat-completions request, by its model name."""
    from roleplay.bench.workload import bench_reply

    model = request.get("model")
    if model == ROLE_MODELS["orchestrator"]:
        call = (
            _tool_call("manage_callbacks", "a promise was made")
            if _phase(request) == 1
            else _tool_call("update_director_state", "keep the promise")
        )
        return Reply(tool_calls=[call], finish_reason="tool_calls")
    if model == ROLE_MODELS["specialist"]:
        return Reply(content=SPECIALIST_TEXT)
    if model == ROLE_MODELS["director"]:
        users = [m for m in request.get("messages") or [] if m.get("role") == "user"]
        seen = str(users[0].get("content") if users else "")
        return Reply(content=state_text(hashlib.sha1(seen.encode()).hexdigest()[:12]))  # noqa: S324
    if model == ROLE_MODELS["autoreply"]:
        return Reply(content='{"options": ["Go on.", "How do you feel?", "Look around."]}')
    return bench_reply()


def agentic_reply() -> Reply:
    """The scripted server's default reply when it serves Agent V2's roles too."""
    return Reply.from_callable(route)


@dataclass
class AgenticSet:
    scenario: Scenario
    configs: dict[str, ModelConfig]
    conversations: list[Conversation]
    warmup: list[Conversation]


@transaction.atomic
def add_agentic(
    tenant,
    actor: ModelConfig,
    base_url: str,
    *,
    players: int,
    warmup: int = 0,
    seed_state: bool = True,
    prefix: str = "agentic",
) -> AgenticSet:
    """The role configs, the Agent V2 scenario, its character and ``players`` measured plus
    ``warmup`` unmeasured conversations (one player each) in ``tenant``."""
    from roleplay.agentic.services import agent_state
    from roleplay.scenarios.services import create_scenario

    configs = {
        role: ModelConfig.objects.create(
            tenant=tenant,
            name=f"bench-{role}",
            provider="openai_compatible",
            model=model,
            base_url=base_url,
            context_limit=8192,
            max_output_tokens=512,
            timeout_ms=30_000,
        )
        for role, model in ROLE_MODELS.items()
    }
    v2 = {
        "modelConfigs": {
            "actor": actor.name,
            "orchestrator": configs["orchestrator"].name,
            "specialists": {tool: configs["specialist"].name for tool in SPECIALISTS},
            "director": configs["director"].name,
            "autoReply": configs["autoreply"].name,
        },
        "modelCallTimeoutMs": 30_000,
    }
    scenario = create_scenario(tenant, name="Bench continuity", model_config=actor, agenticV2=v2)
    character = Character.objects.create(
        tenant=tenant,
        name="Bench Keeper",
        description="A lighthouse keeper who answers every question at length.",
        first_message="Welcome to the lighthouse.",
        default_scenario=scenario,
    )
    conversations = []
    for index in range(players + warmup):
        player = Player.objects.create(
            tenant=tenant,
            external_id=f"bench-{prefix}-{index}",
            display_name=f"Player {prefix} {index}",
        )
        conversation = Conversation.objects.create(
            tenant=tenant, player=player, character=character
        )
        if seed_state:
            entries = [
                ledger.entry_for("manage_callbacks", 0, f"{SPECIALIST_TEXT} ({i})", "seed")
                for i in range(SEED_LEDGER)
            ]
            for i, entry in enumerate(entries):
                entry["key"] = f"manage_callbacks:seed:{i}"
            agent_state.commit(
                conversation,
                scenario,
                expected_head=0,
                state=state_text("seed"),
                tools_called=["manage_callbacks", "update_director_state"],
                source_turn=0,
                source_message_id=None,
                ledger_entries=entries,
            )
        conversations.append(conversation)
    return AgenticSet(scenario, configs, conversations[warmup:], conversations[:warmup])
