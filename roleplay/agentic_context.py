"""Agent V2 in a turn (seed 002): the Actor reads the turn-start state, and the turn's
background run is recorded with its reply.

A context hook (``turns.CONTEXT_HOOKS``), cheap and synchronous: for a conversation whose
scenario has ``agenticV2`` on (and not ``storyV1``, which routes to Story), it takes the
state in force (read with the conversation, ``turns.reads``), places the Actor's continuity
block (the state and its ledger projection within ``maxStateChars + 2000`` characters, or
the default note when there is none yet) and, for a turn that answers the player
(``chat``, ``regenerate``, ``edit_regenerate``, ``auto_reply``; a ``continue`` goes on with
the same turn's reply), records the turn's planning run (``services.planning.start``) in
the transaction that commits the reply (``ctx.with_reply``), whose commit wakes the relay
that sends its task (``agentic_relay``): nothing of it is on the path to the first delta,
and the Actor never waits for the background. With
``recovery.tolerateMissingStreamMetadata`` the Actor's stream may end without a
``finish_reason`` (seed 002 line 147: that case only; every other model error stays one).
"""

from __future__ import annotations

from dataclasses import replace

from roleplay.agentic import inputs
from roleplay.agentic.runner import Inputs
from roleplay.memory_pack_context import PACK_KEY
from roleplay.models import Conversation, TurnKind
from roleplay.selectors import agentic_config
from roleplay.services import planning
from roleplay.turns.context import AGENT_STATE_KEY
from roleplay.worldbook_context import selected_entries

BLOCK_ID = "agentic:state"
# What Compact's phase leaves for the background: {summary, history: [(role, text)]}.
PROJECTION_KEY = "compact:projection"
PLANNING_KINDS = (
    TurnKind.CHAT,
    TurnKind.REGENERATE,
    TurnKind.EDIT_REGENERATE,
    TurnKind.AUTO_REPLY,
)


def apply(ctx, conversation: Conversation) -> None:
    scenario = ctx.scenario
    config = agentic_config(scenario)
    if config is None:
        return
    ctx.tolerate_missing_stream_metadata = config.recovery.tolerateMissingStreamMetadata
    snapshot = ctx.reads[AGENT_STATE_KEY]  # read with the conversation (turns.reads)
    block = inputs.actor_block(
        snapshot.state, snapshot.ledger, max_state_chars=config.maxStateChars
    )
    position = ctx.place(BLOCK_ID, block)
    ctx.trace["agentic"] = {
        "scenario": str(scenario.pk),
        "revision": snapshot.revision,
        "default_note": snapshot.state is None,
        "position": position,
        "chars": len(block),
    }
    if not ctx.record or ctx.kind not in PLANNING_KINDS or ctx.user_input is None:
        return
    ctx.with_reply.append(lambda: _start_planning(ctx, config, snapshot))


def _start_planning(ctx, config, snapshot) -> None:
    """Record the turn's planning run with the inputs the turn started from (made here, with
    the reply, not before its first delta)."""
    history = [(m.role, m.content) for m in ctx.history]
    number = 1 + sum(1 for role, _ in history if role == "user")
    character = ctx.character
    given = Inputs(
        turn=number,
        revision=snapshot.revision,
        state=snapshot.state,
        entries=snapshot.ledger,
        sheet=inputs.Sheet(
            name=character.name,
            description=character.description,
            definition=_definition(character),
            opening=ctx.greeting,
        ),
        persona_name=ctx.persona.name,
        persona_description=ctx.persona.description,
        history=inputs.recent_dialogue(history),  # all the run reads of it
        query=ctx.user_input,
        first_turn=number == 1,
        lore=[e["content"] for e in selected_entries(ctx)] if config.backgroundWorldbook else [],
        recalled=ctx.reads.get(PACK_KEY, ""),
    )
    planning.start(ctx.turn, ctx.scenario, config, governed(ctx, config, given), head=snapshot.head)


def governed(ctx, config, given: Inputs) -> Inputs:
    """With ``contextGovernance.mode`` ``enforce``, the background reads what Compact gave
    the Actor (its summary and the kept messages) instead of the raw recent history; with
    ``shadow`` (or no compaction this turn) the original. Called once the Actor streams, so
    Compact's phase has run."""
    governance = config.contextGovernance
    projection = ctx.reads.get(PROJECTION_KEY)
    if governance is None or governance.mode != "enforce" or projection is None:
        return given
    return replace(
        given,
        history=inputs.recent_dialogue(projection["history"]),
        summary=projection["summary"],
    )


def _definition(character) -> str:
    parts = [
        ("Personality", character.personality),
        ("Scenario", character.scenario),
        ("Example dialogue", character.example_dialogues),
    ]
    return "\n".join(f"{label}: {text.strip()}" for label, text in parts if (text or "").strip())
