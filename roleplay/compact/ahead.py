"""Pre-compaction's cue (beyond seed 002, Compact): the turn plug-in ``compact_ahead``, a
post-turn phase (``settle``) after ``compact``. Once the reply is
committed, a turn whose next prompt will pass the trigger (``budget.due_next``: this
prompt, plus this reply, plus an input as long as this one) sends the Celery task
``roleplay.prepare_compaction``, which prepares the next checkpoint in the background
(``compact.services.prepare``); the next turn adopts it instead of calling the compactor
(``compact.plugin``). A turn whose compaction failed or missed its deadline (``degraded``)
always sends it: the retry in the background. The decision is made in the phase's
``applies``, so a turn that sends nothing runs no phase and announces none. Recorded as
``trace["compact"]["ahead"]``."""

from __future__ import annotations

import logging

from console.db import run_db
from roleplay.compact.engine import budget as budgets
from roleplay.compact.plugin import MUTATING
from roleplay.turns.phases import Phase, PhaseRun
from roleplay.turns.plugin import TurnPlugin

logger = logging.getLogger(__name__)


def _due_next(ctx) -> bool:
    section = ctx.trace.get("compact")
    if not ctx.record or ctx.reply is None or not section or "trigger" not in section:
        return False
    tokens = section.get("tokens_after", section.get("tokens_before"))
    if tokens is None:
        return False
    count = ctx.tokens.count_tokens  # the Actor's tokenizer, as the trigger's count
    grow = count(ctx.user_input or ""), count(ctx.reply)
    # a compaction that failed on the turn's path is retried here whatever the prediction
    if not section.get("degraded") and not budgets.due_next(tokens, *grow, section["trigger"]):
        return False
    section["ahead"] = {"predicted": tokens + sum(grow), "sent": False}
    return True


async def send(ctx, run: PhaseRun) -> None:
    ids = (str(ctx.conversation.pk), str(ctx.scenario.pk), str(ctx.turn.pk))
    ctx.trace["compact"]["ahead"]["sent"] = await run_db(_send, *ids)


def _send(conversation_id: str, scenario_id: str, turn_id: str) -> bool:
    from console import task_send

    task = task_send.named("roleplay.prepare_compaction")  # by name: tasks import services
    try:
        task_send.send(task, conversation_id, scenario_id, turn_id)
        return True
    except Exception:  # the broker is down: the next turn compacts on its own path
        logger.warning("could not queue the pre-compaction of %s", conversation_id)
        return False


class CompactAheadPlugin(TurnPlugin):
    name = "compact_ahead"
    after = ("compact", "story")  # reads Compact's trace; the story's save goes first
    settle = Phase(
        name="compact_ahead", run=send, kinds=MUTATING, deadline_s=10.0, applies=_due_next
    )


PLUGIN = CompactAheadPlugin()
