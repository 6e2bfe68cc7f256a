"""What a turn's generation reads before the first model call: the character, the player's
name, the model config that applies, the history, and whatever each capability adds
through its hook (worldbook selection today; memory packs and story state as they land)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memory import selectors as message_reads
from roleplay.actor import CharacterSheet
from roleplay.llm.gateway import resolve_config
from roleplay.models import Conversation, ModelConfig, Turn

HISTORY_LIMIT = 50


@dataclass
class TurnContext:
    """Everything generation needs, read once before the first model call."""

    turn: Turn
    sheet: CharacterSheet
    history: list[dict]
    user_input: str
    user_name: str
    config: ModelConfig | None
    trace: dict = field(default_factory=dict)
    blocks: list = field(default_factory=list)


# Capabilities add themselves here (worldbook selection, memory packs...): f(ctx, conversation).
CONTEXT_HOOKS: list[Callable[[TurnContext, Conversation], None]] = []


def load_context(turn: Turn, user_input: str | None = None) -> TurnContext:
    """The context of ``turn``: its conversation as it is now (a renamed character or
    player, a changed model config), the history before the player's message, and every
    capability hook's additions."""
    conversation = Conversation.objects.select_related(
        "tenant", "character", "player", "model_config", "character__model_config"
    ).get(pk=turn.conversation_id)
    character = conversation.character
    rows = message_reads.get_history_lines(
        conversation.tenant, conversation.session_id, HISTORY_LIMIT
    )
    if user_input is None:
        user_input = next((text for id_, _, text in rows if id_ == turn.user_message_id), "")
    history = [
        {"role": role, "content": text}
        for id_, role, text in rows
        if id_ != turn.user_message_id and role in ("user", "assistant") and text
    ]
    config = resolve_config(conversation.tenant, conversation=conversation, character=character)
    ctx = TurnContext(
        turn=turn,
        sheet=CharacterSheet(
            name=character.name,
            description=character.description,
            first_message=character.first_message,
            example_dialogues=character.example_dialogues,
        ),
        history=history,
        user_input=user_input,
        user_name=conversation.player.display_name or "User",
        config=config,
    )
    ctx.trace["read"] = {
        "history_messages": len(history),
        "model_config": str(config.id) if config else "env-default",
    }
    for hook in CONTEXT_HOOKS:
        hook(ctx, conversation)
    return ctx
