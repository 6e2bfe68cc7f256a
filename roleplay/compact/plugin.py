"""Compact in a turn (seed 002, Compact): the turn plug-in ``compact``, a pre-Actor phase
for a conversation whose scenario has ``compact`` on, after every other plug-in has added
its blocks (its ``after`` names them all).

1. Read the newest checkpoint (with the turn's other reads) and check it
   (``engine.checkpoint.verify``); a good one replaces the history it covers with its
   summary (a placed system block). One whose history changed is invalidated by version
   when this request may mutate (``chat``, ``continue``, ``auto_reply``), and the history is
   taken whole.
2. Count the real assembled prompt. Compaction is due past ``triggerRatio`` × budget
   (context limit − max output − ``safetyMarginTokens``), or when the summary's covered end
   is about to leave the history a request carries. Steps 1 and 2 need no wait: a turn
   with nothing due is settled there (the phase's ``applies``), so it neither runs the phase
   nor announces it, and a stale version is marked once the reply is committed.
3. Fold the closed groups before the last ``keepLastCanonicalGroups`` into a new summary
   (the ``compactor`` role prompt of ``compactorModelConfigId``'s preset; ``ModelCall``
   purpose ``compactor``; at most ``maxModelCalls`` answers within ``maxCompactionMs``; a
   candidate whose request leaves the compactor less than ``minGenerationTokens`` is made
   smaller, at most ``maxCandidateAttempts`` candidates: ``model.fold``),
   re-render and re-count; adopt it only if the Actor input now fits, and save it as a new
   version (compare-and-set, ``checkpointMutationTimeoutMs``, read back after a timeout)
   when the request may mutate. A save that fails leaves the summary in use for this turn:
   the trace says ``persisted: false``.
4. The failure ladder: a compaction that failed or missed its deadline never drops covered
   history silently. The newest valid summary keeps serving with the groups it does not
   cover: the original when it fits; else the oldest uncovered groups are dropped and the
   prompt re-counted (``bounded_recent`` gives the summary up with them, as the seed says:
   its chain is broken; otherwise it goes only when no group is left); still too big →
   ``context_overflow``. The turn records ``degraded`` and ``ahead`` retries the
   compaction in the background. Every step goes into ``trace["compact"]``.
"""

from __future__ import annotations

import logging

from roleplay.compact.job import (  # noqa: F401  (Agent V2 and the bench read them here)
    HEADER,
    MUTATING,
    READ_BACK_S,
    CompactState,
    Job,
    Projection,
)
from roleplay.compact.services import checkpoints as store
from roleplay.scenarios.config import MAX_COMPACTION_MS
from roleplay.turns.phases import Phase, PhaseRun
from roleplay.turns.plugin import TurnPlugin

logger = logging.getLogger(__name__)


def read_hook(ctx, conversation) -> None:
    """The newest checkpoint read with the turn's other reads (on the database thread that
    loads the context), so the phase makes no trip of its own."""
    if ctx.settings.compact is not None:
        state = ctx.slot(CompactState)
        state.read, state.row = True, store.newest(conversation.pk, ctx.scenario.pk)


# The phase's own deadline is only a backstop: the job stops at the scenario's
# ``maxCompactionMs`` and degrades (the failure ladder), so the backstop is the longest
# ``maxCompactionMs`` allowed plus the read-back, never shorter than a valid setting.
PHASE_DEADLINE_S = MAX_COMPACTION_MS / 1000 + 2 * READ_BACK_S + 30.0


def _due(ctx) -> bool:
    """Whether the phase runs: Compact is on and the quick part (:meth:`Job.settle`: the
    checkpoint read with the turn's other reads, its check, the count) left work to do. A
    turn with no compaction due is settled there: no phase, no socket events."""
    if ctx.settings.compact is None:
        return False
    job = Job(ctx)
    try:
        if job.settle():
            return False
    except Exception:  # the phase starts over and fails the turn with its code if it must
        logger.exception("compact: the quick check failed")
        return True
    ctx.slot(CompactState).job = job
    return True


async def prepare(ctx, run: PhaseRun) -> None:
    state = ctx.slot(CompactState)
    job, state.job = state.job or Job(ctx), None
    await job.run()
    job.project()


class CompactPlugin(TurnPlugin):
    name = "compact"
    # Last before the Actor: it counts the prompt every other plug-in has added to.
    after = (
        "worldbook",
        "memory_learning",
        "memory_context",
        "memory_pack",
        "memory_external",
        "agentic",
        "story",
    )
    prepare = Phase(
        name="compact", run=prepare, deadline_s=PHASE_DEADLINE_S, required=True, applies=_due
    )

    def read(self, ctx, conversation) -> None:
        read_hook(ctx, conversation)

    def after_reply(self, ctx):
        return ctx.slot(CompactState).invalidate


PLUGIN = CompactPlugin()
