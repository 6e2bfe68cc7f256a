"""Moderation's turn plug-in: the one hook on every door's turns (socket, REST, auto-mode).

- ``admit``: before anything is stored, a suspended player's turn is refused and the
  player's message is judged by the tenant's policy (``services.admit``); a message it
  warns of goes on, and the player is told with a ``moderation.warning`` (:func:`warning`)
  before the reply streams;
- ``after_commit``: the committed reply is judged; a hidden one is taken out of the
  history, and ``turn.completed`` carries no text of it (``message.hidden`` tells every
  socket). The deltas streamed before the check were already sent: a client drops the
  message on ``message.hidden``.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.db import run_db
from roleplay.models import TurnKind
from roleplay.turns import Phase, TurnPlugin

from . import services
from .engine.rules import Decision, hides_reply

WARNING = "moderation.warning"


def warning(decision: Decision) -> dict:
    """What the player is told of a message the policy let through with a warning."""
    return {
        "type": WARNING,
        "category": decision.category,
        "categories": list(decision.categories),
        "message": "Your message was sent, but this community's moderation flagged it "
        f"({decision.category}). Please keep to the rules.",
    }


@dataclass
class ReplyCheck:
    """Whether this turn's reply is judged (the tenant's policy checks replies)."""

    on: bool = False


async def _check_reply(ctx, run) -> None:
    turn = ctx.turn
    decision = await run_db(
        services.check_reply, ctx.conversation, turn.assistant_message_id, ctx.reply or ""
    )
    if decision is None:
        return
    ctx.trace["moderation"] = {"action": decision.action, "categories": list(decision.categories)}
    if hides_reply(decision):
        ctx.reply = ""
        await run.send(
            {"type": "message.hidden", "turn_id": str(turn.id),
             "message_id": str(turn.assistant_message_id)}
        )  # fmt: skip


def _judged(ctx) -> bool:
    return ctx.slot(ReplyCheck).on


class ModerationPlugin(TurnPlugin):
    name = "moderation"
    after_commit = Phase(name="moderation", run=_check_reply, deadline_s=15,
                         kinds=frozenset(TurnKind.values), applies=_judged)  # fmt: skip

    def read(self, ctx, conversation) -> None:
        ctx.slot(ReplyCheck).on = ctx.checks_replies  # read with the conversation

    def admit(self, conversation, kind: str, content: str) -> list[dict]:
        decision = services.admit(conversation, content if kind == TurnKind.CHAT else "")
        return [warning(decision)] if decision is not None else []


PLUGIN = ModerationPlugin()
