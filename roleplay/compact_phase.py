"""Compact in a turn (seed 002, Compact): a pre-Actor phase, for a conversation whose
scenario has ``compact`` on, after every other phase has added its blocks.

1. Read the newest checkpoint (with the turn's other reads) and check it
   (``compact.checkpoint.verify``); a good one replaces the history it covers with its
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
   purpose ``compactor``; at most ``maxModelCalls`` answers within ``maxCompactionMs``),
   re-render and re-count; adopt it only if the Actor input now fits, and save it as a new
   version (compare-and-set, ``checkpointMutationTimeoutMs``, read back after a timeout)
   when the request may mutate. A save that fails leaves the summary in use for this turn:
   the trace says ``persisted: false``.
4. The failure ladder: the compactor failed but the original fits → the original; else drop
   the oldest whole groups (and the old summary with them: its chain is broken) and re-count;
   still too big → ``context_overflow``. Every step goes into ``trace["compact"]``.
"""

from __future__ import annotations

import asyncio
import logging
import time

from console.db import run_db
from console.tokens import count_messages, count_tokens
from roleplay import compact_model
from roleplay.agentic_context import PROJECTION_KEY
from roleplay.agentic_gateway import role_system
from roleplay.compact import budget as budgets
from roleplay.compact import checkpoint as cp
from roleplay.compact import groups as grouping
from roleplay.compact import protocol
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway, provider_config
from roleplay.models import TurnKind
from roleplay.prompting.assembly import ContextOverflow
from roleplay.selectors import agentic_config, compact_config, model_configs_by_ref
from roleplay.services import compact_checkpoints as store
from roleplay.turns.context import HISTORY_LIMIT, actor_prompt
from roleplay.turns.phases import Laps, Phase, PhaseRun

logger = logging.getLogger(__name__)

BLOCK_ID = "compact:summary"
HEADER = "[SUMMARY OF THE EARLIER CONVERSATION]"
MUTATING = frozenset({TurnKind.CHAT, TurnKind.CONTINUE, TurnKind.AUTO_REPLY})
# With a full window, a summary whose end is among the oldest this many messages is
# about to leave it: compress early.
EARLY_MARGIN = 8
READ_BACK_S = 2.0


ROW_KEY = "compact:row"


def read_hook(ctx, conversation) -> None:
    """A context hook: the newest checkpoint read with the turn's other reads (on the
    database thread that loads the context), so the phase makes no trip of its own."""
    if compact_config(ctx.scenario) is not None:
        ctx.reads[ROW_KEY] = store.newest(conversation.pk, ctx.scenario.pk)


JOB_KEY = "compact:job"


def phases() -> list[Phase]:
    return [Phase("compact", "pre_actor", prepare, deadline_s=300.0, required=True, applies=_due)]


def _due(ctx) -> bool:
    """Whether the phase runs: Compact is on and the quick part (:meth:`_Job.settle`: the
    checkpoint read with the turn's other reads, its check, the count) left work to do. A
    turn with no compaction due is settled there: no phase, no socket events."""
    if compact_config(ctx.scenario) is None:
        return False
    job = _Job(ctx)
    try:
        if job.settle():
            return False
    except Exception:  # the phase starts over and fails the turn with its code if it must
        logger.exception("compact: the quick check failed")
        return True
    ctx.reads[JOB_KEY] = job
    return True


async def prepare(ctx, run: PhaseRun) -> None:
    job = ctx.reads.pop(JOB_KEY, None) or _Job(ctx)
    await job.run()
    job.project()


class _Job:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.config = compact_config(ctx.scenario)
        pconfig = provider_config(ctx.config)
        self.budget = budgets.budget(
            pconfig.context_limit, pconfig.max_output_tokens, self.config.safetyMarginTokens
        )
        self.trigger = budgets.trigger_line(self.budget, self.config.triggerRatio)
        self.mutation = ctx.record and ctx.kind in MUTATING
        self.trace: dict = ctx.trace.setdefault(
            "compact",
            {"budget": self.budget, "trigger": self.trigger, "mutation": self.mutation},
        )
        self.steps: list[dict] = self.trace.setdefault("steps", [])
        self.whole = list(ctx.history)
        self.summary = ""
        character = ctx.character
        self.clock = Laps()
        self.trace["timings_ms"] = self.clock.laps
        self.due: bool | None = None
        self.stale: tuple[int, str] | None = None
        self.config_fp = cp.config_fingerprint(
            character=str(character.pk),
            name=character.name,
            compactor=self.config.compactorModelConfigId,
            profile=self.config.profile,
            input=self.config.inputProtocol,
            output=self.config.outputFormat,
            max_summary=self.config.maxSummaryTokens,
        )

    def step(self, name: str, **detail) -> None:
        self.steps.append({"step": name, **detail})

    def settle(self) -> bool:
        """The part that needs no wait; True when it settles the turn (nothing is due)."""
        ctx = self.ctx
        if ROW_KEY not in ctx.reads:
            return False
        self._begin(ctx.reads.pop(ROW_KEY))
        if self.due:
            return False
        self.project()
        return True

    def _begin(self, row) -> None:
        """Check the newest checkpoint ``row``, place its summary, count the prompt."""
        self.clock.lap("read")
        self.expected = row.version if row else 0
        self.current = self._read_back(row)
        self.clock.lap("verify")
        if self.current is not None:
            self._use(self.current.summary, cp.after(self.current, self.whole))
        self.clock.lap("place")
        self.tokens = self._demand()
        self.clock.lap("count")
        self.trace.update(
            checkpoint=self.current.version if self.current else None, tokens_before=self.tokens
        )
        self.early = self._leaving(self.current)
        self.due = budgets.due(self.tokens, self.trigger) or self.early
        if not self.due:
            self.step("not_due", tokens=self.tokens)
            self.trace["outcome"] = "not_due"
            self._invalidate_later()

    async def run(self) -> None:
        ctx = self.ctx
        if self.due is None:
            self._begin(await run_db(store.newest, ctx.conversation.pk, ctx.scenario.pk))
        if not self.due:
            return
        await self._invalidate()
        current = self.current
        self.step("due", tokens=self.tokens, early=self.early)
        original = (current, list(ctx.history), self.tokens)
        try:
            adopted = await self._compress(current)
        except (TimeoutError, ModelError, protocol.SummaryInvalid) as exc:
            self.step("compactor_failed", error=getattr(exc, "code", type(exc).__name__))
            adopted = False
        if not adopted:
            self._ladder(*original)

    def _read_back(self, row):
        """The checkpoint to continue from, or None; one whose covered history changed is
        invalidated by version (``_invalidate``) when this request may mutate."""
        if row is None or row.status != "active":
            return None
        checkpoint = store.as_checkpoint(row)
        verdict = cp.verify(
            checkpoint,
            self.whole,
            config_fp=self.config_fp,
            output_format=self.config.outputFormat,
            max_summary_tokens=self.config.maxSummaryTokens,
            count_tokens=count_tokens,
        )
        self.step("read_back", version=checkpoint.version, ok=verdict.ok, reason=verdict.reason)
        if verdict.ok:
            return checkpoint
        if verdict.history_changed and self.mutation:
            self.stale = (checkpoint.version, verdict.reason)
        return None

    def _invalidate_write(self) -> bool:
        version, reason = self.stale
        return store.invalidate(self.ctx.conversation.pk, self.ctx.scenario.pk, version, reason)

    async def _invalidate(self) -> None:
        """Before a compaction: the stale version marked now."""
        if self.stale is not None:
            done = await run_db(self._invalidate_write)
            self.step("invalidated", version=self.stale[0], done=done)
            self.stale = None

    def _invalidate_later(self) -> None:
        """No compaction due: the stale version is marked once the reply is committed (off
        the path to the first delta; the next turn's check refuses it meanwhile)."""
        if self.stale is not None:
            self.step("invalidated", version=self.stale[0], deferred=True)
            self.ctx.after_reply.append(self._invalidate_write)

    def _leaving(self, current) -> bool:
        if current is None or len(self.whole) < HISTORY_LIMIT:
            return False
        ids = [str(m.id) for m in self.whole]
        return ids.index(current.last_id) < EARLY_MARGIN

    def _use(self, summary: dict | None, history: list) -> None:
        """The Actor reads ``summary`` (None: none) and then ``history``."""
        ctx = self.ctx
        ctx.blocks = [b for b in ctx.blocks if b.get("id") != BLOCK_ID]
        ctx.history = list(history)
        self.summary = cp.summary_text(summary) if summary is not None else ""
        if summary is not None:
            ctx.place(BLOCK_ID, HEADER + "\n" + self.summary)

    def project(self) -> None:
        """Context governance (Agent V2 with Compact): what the background would read
        instead of the raw history; ``enforce`` makes it read it (``agentic_context``),
        ``shadow`` only records it."""
        agentic = agentic_config(self.ctx.scenario)
        governance = agentic.contextGovernance if agentic is not None else None
        if governance is None:
            return
        changed = bool(self.summary) or len(self.ctx.history) != len(self.whole)
        if changed:
            self.ctx.reads[PROJECTION_KEY] = {
                "summary": self.summary,
                "history": [(m.role, m.content) for m in self.ctx.history],
            }
        self.trace["governance"] = {
            "mode": governance.mode,
            "background_reads": "projection"
            if changed and governance.mode == "enforce"
            else "original",
            "projection_messages": len(self.ctx.history),
            "original_messages": len(self.whole),
            "summary_chars": len(self.summary),
        }

    def _demand(self) -> int:
        """The tokens of the Actor prompt with every history message the request carries
        (the assembly would drop the oldest ones to fit; those count here)."""
        try:
            prompt = actor_prompt(self.ctx)
        except ContextOverflow as exc:
            return int(exc.details.get("tokens", 10**9))
        dropped = [m.chat() for m in self.ctx.history[: prompt.dropped_history]]
        extra = count_messages(dropped) - count_messages([]) if dropped else 0
        return prompt.prompt_tokens + extra

    async def _compress(self, current) -> bool:
        ctx, config = self.ctx, self.config
        uncovered = list(ctx.history)
        keys = [None] * len(uncovered)  # one turn's messages share a group key
        mode = config.boundaryMode
        if mode == "explicit_groups":
            keys = [m.id if m.role == "user" else None for m in uncovered]
            mode = "selected_turns"  # the stored turns are the explicit groups here
        old, kept = grouping.compressible(
            grouping.group(uncovered, mode, keys), config.keepLastCanonicalGroups
        )
        if not old:
            self.step("nothing_to_compress")
            return False
        folded = [m for g in old for m in g.messages]
        summary = await self._summarise(current, folded)
        first_id = current.first_id if current else str(folded[0].id)
        covered = self._covered(current, folded, first_id)
        checkpoint = cp.Checkpoint(
            version=self.expected + 1,
            summary=summary,
            first_id=first_id,
            last_id=str(folded[-1].id),
            covered_count=covered[0],
            fingerprint=covered[1],
            config_fingerprint=self.config_fp,
            chain=current.version if current else None,
        )
        self._use(summary, [m for g in kept for m in g.messages])
        tokens = self._demand()
        self.step("compressed", messages=len(folded), tokens=tokens)
        if tokens > self.budget:
            self.step("still_too_big", tokens=tokens)
            return False
        self.trace.update(outcome="compacted", tokens_after=tokens, covered_messages=len(folded))
        await self._persist(checkpoint)
        return True

    def _covered(self, current, folded: list, first_id: str) -> tuple[int, str]:
        """(count, fingerprint) of everything the new checkpoint covers."""
        ids = [str(m.id) for m in self.whole]
        if first_id in ids:
            span = self.whole[ids.index(first_id) : ids.index(str(folded[-1].id)) + 1]
            return len(span), cp.fingerprint(span)
        # the first covered message is older than the window: chain the fingerprints
        return current.covered_count + len(folded), cp.config_fingerprint(
            earlier=current.fingerprint, more=cp.fingerprint(folded)
        )

    async def _summarise(self, current, folded: list) -> dict:
        ctx, config = self.ctx, self.config
        ref = config.compactorModelConfigId
        model_config = (await run_db(model_configs_by_ref, ctx.turn.tenant_id, [ref])).get(ref)
        if model_config is None:
            raise ModelError("model_config_missing", f"no model config {ref!r}", retryable=False)
        system = role_system(
            model_config,
            "compactor",
            {"characterName": ctx.character.name, "maxSummaryTokens": str(config.maxSummaryTokens)},
        )
        earlier = cp.summary_text(current.summary) if current else ""
        speakers = [
            (ctx.user_name if m.role == "user" else ctx.character.name, m.content) for m in folded
        ]
        gateway = Gateway(
            ctx.turn.tenant, model_config, "compactor", turn_id=ctx.turn.id, run_db=run_db
        )
        try:
            return await compact_model.summarise(
                gateway,
                config,
                system,
                speakers,
                earlier=earlier,
                latest=ctx.user_input,
                on_refused=lambda reason: self.step("summary_refused", reason=reason),
            )
        finally:
            self.trace.setdefault("model_calls", []).extend(gateway.call_ids)

    async def _persist(self, checkpoint: cp.Checkpoint) -> None:
        ctx = self.ctx
        persisted = False
        if not self.mutation:
            self.step("not_saved", reason="request kind may not mutate checkpoints")
        else:
            audit = {
                "compactor": self.config.compactorModelConfigId,
                "prompt": "compactor",
                "counter": "cl100k",
                "turn_id": str(ctx.turn.id),
            }
            save = run_db(
                store.save,
                ctx.turn.tenant_id,
                ctx.conversation.pk,
                ctx.scenario.pk,
                checkpoint,
                expected=self.expected,
                audit=audit,
            )
            try:
                await asyncio.wait_for(save, self.config.checkpointMutationTimeoutMs / 1000)
                persisted = True
            except store.StaleCheckpoint as exc:
                self.step("save_conflict", error=exc.code)
            except TimeoutError:
                persisted = await self._confirm(checkpoint)
                self.step("save_timeout", confirmed=persisted)
            except Exception as exc:  # the summary still serves this turn
                self.step("save_failed", error=type(exc).__name__)
        self.trace.update(persisted=persisted, version=checkpoint.version if persisted else None)

    async def _confirm(self, checkpoint: cp.Checkpoint) -> bool:
        deadline = time.monotonic() + READ_BACK_S
        while time.monotonic() < deadline:
            try:
                found = await asyncio.wait_for(
                    run_db(
                        store.confirm,
                        self.ctx.conversation.pk,
                        self.ctx.scenario.pk,
                        checkpoint,
                        version=checkpoint.version,
                    ),
                    max(deadline - time.monotonic(), 0.001),
                )
            except TimeoutError:
                return False
            if found:
                return True
            await asyncio.sleep(0.1)
        return False

    def _ladder(self, current, history: list, tokens: int) -> None:
        """The failure ladder, from the state before compression was tried."""
        self._use(current.summary if current else None, history)
        if tokens <= self.budget:
            self.step("original_fits", tokens=tokens)
            self.trace["outcome"] = "original"
            return
        groups = grouping.group(history)
        summary = current.summary if current else None
        while groups:
            groups = groups[1:]
            if summary is not None:
                summary = None  # dropping uncovered history breaks the summary's chain
                self.step("summary_dropped", reason="chain broken")
            self._use(None, [m for g in groups for m in g.messages])
            tokens = self._demand()
            self.step("dropped_group", tokens=tokens, groups_left=len(groups))
            if tokens <= self.budget:
                self.trace["outcome"] = "dropped_history"
                return
        self.trace["outcome"] = "context_overflow"
        raise ContextOverflow(
            message=f"the prompt needs {tokens} tokens even without history; the budget is "
            f"{self.budget}",
            details={"tokens": tokens, "budget": self.budget},
        )
