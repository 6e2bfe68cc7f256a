"""Agent V2 in a turn (seed 002): the Actor reads the turn-start state, and the turn's
background run is recorded with its reply.

The turn plug-in ``agentic``: its ``read`` hook, cheap and synchronous: for a conversation whose
scenario has ``agenticV2`` on (and not ``storyV1``, which routes to Story), it takes the
state in force (read with the conversation, ``turns.reads``), places the Actor's continuity
block (the state and its ledger projection within ``maxStateChars + 2000`` characters, or
the default note when there is none yet) and, for a turn that answers the player
(``chat``, ``regenerate``, ``edit_regenerate``, ``auto_reply``; a ``continue`` goes on with
the same turn's reply), records the turn's planning run (``services.planning.start``) in
the transaction that commits the reply (its ``beside`` hook), whose commit wakes the relay
that sends its task (``relay``): nothing of it is on the path to the first delta,
and the Actor never waits for the background. With
``recovery.tolerateMissingStreamMetadata`` the Actor's stream may end without a
``finish_reason`` (seed 002 line 147: that case only; every other model error stays one).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from roleplay.agentic.engine import inputs
from roleplay.agentic.engine.runner import Inputs
from roleplay.agentic.services import planning
from roleplay.compact.plugin import Projection
from roleplay.memory_plugin.packs import RecalledPack
from roleplay.models import Conversation, TurnKind
from roleplay.turns.plugin import TurnPlugin
from roleplay.worldbook_plugin.context import selected_entries

BLOCK_ID = "agentic:state"
PLANNING_KINDS = (
    TurnKind.CHAT,
    TurnKind.REGENERATE,
    TurnKind.EDIT_REGENERATE,
    TurnKind.AUTO_REPLY,
)


@dataclass
class Planning:
    """What the ``read`` hook leaves for ``beside`` (``ctx.slot(Planning)``): the config and
    the state the turn's planning run starts from, when it has one."""

    config: Any = None
    snapshot: Any = None


class AgenticPlugin(TurnPlugin):
    name = "agentic"
    # Its block follows the worldbook's and memory's; its background reads the worldbook's
    # selection and the memory pack.
    after = ("worldbook", "memory_pack")

    def read(self, ctx, conversation) -> None:
        apply(ctx, conversation)

    def beside(self, ctx):
        planned = ctx.slot(Planning)
        if planned.config is None:
            return None
        return lambda: _start_planning(ctx, planned.config, planned.snapshot)


PLUGIN = AgenticPlugin()


def apply(ctx, conversation: Conversation) -> None:
    scenario = ctx.scenario
    config = ctx.settings.agentic
    if config is None:
        return
    ctx.tolerate_missing_stream_metadata = config.recovery.tolerateMissingStreamMetadata
    snapshot = ctx.agent_state  # read with the conversation (turns.reads)
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
    planned = ctx.slot(Planning)
    planned.config, planned.snapshot = config, snapshot


def _start_planning(ctx, config, snapshot) -> None:
    """Record the turn's planning run with the inputs the turn started from (made here, with
    the reply, not before its first delta)."""
    history = [(m.role, m.content) for m in ctx.history]
    number = 1 + sum(1 for role, _ in history if role == "user")
    character = ctx.speaker  # the acting character (a group's speaker)
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
        recalled=ctx.slot(RecalledPack).text,
    )
    planning.start(ctx.turn, ctx.scenario, config, governed(ctx, config, given), head=snapshot.head)


def governed(ctx, config, given: Inputs) -> Inputs:
    """With ``contextGovernance.mode`` ``enforce``, the background reads what Compact gave
    the Actor (its summary and the kept messages) instead of the raw recent history; with
    ``shadow`` (or no compaction this turn) the original. Called once the Actor streams, so
    Compact's phase has run."""
    governance = config.contextGovernance
    projection = ctx.slot(Projection)
    if governance is None or governance.mode != "enforce" or projection.history is None:
        return given
    return replace(
        given,
        history=inputs.recent_dialogue(projection.history),
        summary=projection.summary,
    )


def _definition(character) -> str:
    parts = [
        ("Personality", character.personality),
        ("Scenario", character.scenario),
        ("Example dialogue", character.example_dialogues),
    ]
    return "\n".join(f"{label}: {text.strip()}" for label, text in parts if (text or "").strip())
