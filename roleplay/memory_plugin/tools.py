"""Seed 000's JSON memory tools in a turn, the turn plug-in ``memory_tools``: when the
character's memory settings turn on ``document_tools``, the Actor is offered ``get_memory``
and ``update_memory`` over this conversation's document (slot ``document_slot``), and the
turn answers its calls between streaming rounds: the call's result goes back to the model,
which then goes on.

The scope comes from the turn, never from the model's arguments. ``update_memory`` commits
at once through the document service (compare-and-set, scrubbing, the ``BEFORE_UPDATE``
hooks), or, with ``document_commit: on_accept``, is held until the player goes on from the
reply (``memory.documents.proposals``, settled by ``memory_context``). At most
:data:`MAX_ROUNDS` rounds of calls (the turn's ``plugin.TOOL_ROUNDS``): the last round
offers no tools, so the reply ends in text. A continue (going on from a reply) and a
preview are offered none.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async

from memory.documents.proposals import Gate
from memory.documents.tools import run_tool
from memory.engine.tools import TOOLS
from roleplay.llm.types import ToolCall
from roleplay.memory_plugin.context import read_settings, settings_for
from roleplay.models import TurnKind
from roleplay.turns.plugin import TOOL_ROUNDS, TurnPlugin

MAX_ROUNDS = TOOL_ROUNDS
OFFERED_KINDS = (TurnKind.CHAT, TurnKind.REGENERATE, TurnKind.EDIT_REGENERATE, TurnKind.AUTO_REPLY)


def tools_for(ctx) -> list[dict[str, Any]] | None:
    """The tools to offer the Actor this turn, or None."""
    if ctx.kind not in OFFERED_KINDS or not ctx.record or ctx.continuing is not None:
        return None
    config = read_settings(ctx)  # read by the memory hooks while the turn loaded
    return TOOLS if config is not None and config.enabled and config.document_tools else None


async def answer(ctx, call: ToolCall) -> dict[str, Any]:
    """The result of one call (an unknown name is answered ``unknown_tool``)."""
    config = settings_for(ctx, ctx.conversation)
    conversation = ctx.conversation
    gate = None
    if config.document_commit == "on_accept":
        gate = Gate(ctx.turn.id, ctx.turn.assistant_message_id)
    outcome = await sync_to_async(run_tool)(
        conversation.tenant,
        conversation.session_id,
        config.document_slot,
        call.name,
        call.arguments,
        gate,
    )
    ctx.trace.setdefault("memory_tools", []).append(
        {"tool": call.name, "outcome": _summary(outcome)}
    )
    return outcome


class MemoryToolsPlugin(TurnPlugin):
    name = "memory_tools"
    after = ("memory_context",)  # offers its tools on the settings that hook read

    def tools(self, ctx) -> list[dict[str, Any]] | None:
        return tools_for(ctx)

    async def call(self, ctx, call: ToolCall) -> dict[str, Any]:
        return await answer(ctx, call)


PLUGIN = MemoryToolsPlugin()


def _summary(outcome: dict[str, Any]) -> dict[str, Any]:
    """What the trace keeps of a call's result: the revision or the error code, no content."""
    if "error" in outcome:
        return {"error": outcome["error"]["code"]}
    return {
        "revision": outcome.get("revision"),
        **({"pending": True} if "pending" in outcome else {}),
    }
