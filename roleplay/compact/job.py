"""One turn's compaction (the steps of ``compact.plugin``'s docstring): check the newest
checkpoint, count the prompt, fold, adopt, persist, and the failure ladder. What the read
hook leaves for it and what it leaves for Agent V2 are the slots here."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from console.db import run_db
from roleplay.compact import model as compact_model
from roleplay.compact.engine import budget as budgets
from roleplay.compact.engine import checkpoint as cp
from roleplay.compact.engine import groups as grouping
from roleplay.compact.engine import protocol
from roleplay.compact.services import checkpoints as store
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import provider_config
from roleplay.models import TurnKind
from roleplay.prompting.assembly import ContextOverflow
from roleplay.turns.context import HISTORY_LIMIT, actor_prompt
from roleplay.turns.phases import Laps

BLOCK_ID = "compact:summary"


HEADER = "[SUMMARY OF THE EARLIER CONVERSATION]"


MUTATING = frozenset({TurnKind.CHAT, TurnKind.CONTINUE, TurnKind.AUTO_REPLY})


# With a full window, a summary whose end is among the oldest this many messages is
# about to leave it: compress early.
EARLY_MARGIN = 8


READ_BACK_S = 2.0


@dataclass
class CompactState:
    """What the ``read`` hook and ``applies`` leave for the phase (``ctx.slot``): the newest
    checkpoint once read (``read``: a turn without one has ``row`` None), the job the quick
    check began."""

    read: bool = False
    row: Any = None
    job: Any = None
    # A stale version to mark once the reply is committed (no compaction was due).
    invalidate: Any = None


@dataclass
class Projection:
    """What Compact gave the Actor, for Agent V2's background (``ctx.slot(Projection)``):
    the summary and the kept history as (role, text); ``history`` None when it changed
    nothing."""

    summary: str = ""
    history: list[tuple[str, str]] | None = None


class Job:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.config = ctx.settings.compact
        pconfig = provider_config(ctx.config)
        self.budget = budgets.budget(
            pconfig.context_limit, pconfig.max_output_tokens, self.config.safetyMarginTokens
        )
        self.trigger = budgets.trigger_line(self.budget, self.config.triggerRatio)
        self.mutation = ctx.record and ctx.kind in MUTATING
        self.trace: dict = ctx.trace.setdefault(
            "compact",
            {
                "budget": self.budget,
                "trigger": self.trigger,
                "mutation": self.mutation,
                "tokenizer": ctx.tokens.name,
            },
        )
        self.steps: list[dict] = self.trace.setdefault("steps", [])
        self.whole = list(ctx.history)
        self.ids = [str(m.id) for m in self.whole]
        self.summary = ""
        self.clock = Laps()
        self.trace["timings_ms"] = self.clock.laps
        self.due: bool | None = None
        self.failure = ""  # why no compaction was adopted: the degradation's reason
        self.recent = self.config.executionPolicy == "bounded_recent"
        self.stale: tuple[int, str] | None = None
        self.config_fp = compact_model.config_fingerprint(ctx.character, self.config)

    def step(self, name: str, **detail) -> None:
        self.steps.append({"step": name, **detail})

    def settle(self) -> bool:
        """The part that needs no wait; True when it settles the turn (nothing is due)."""
        state = self.ctx.slot(CompactState)
        if not state.read:
            return False
        row, state.read, state.row = state.row, False, None
        self._begin(row)
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
            self._use(self.current.summary, cp.after(self.current, self.whole, self.ids))
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
            adopted = await self._adopt(current) or await self._compress(current)
        except TimeoutError:
            adopted = self._failed("compaction_timeout")
        except (ModelError, protocol.SummaryInvalid) as exc:
            adopted = self._failed(exc.code)
        if not adopted:
            self._ladder(*original)

    def _failed(self, reason: str) -> bool:
        self.step("compactor_failed", error=reason)
        self.failure = reason
        return False

    def _read_back(self, row):
        """The checkpoint to continue from, or None; one whose covered history changed is
        invalidated by version (``_invalidate``) when this request may mutate."""
        if row is None or row.status != "active":
            return None
        checkpoint = store.as_checkpoint(row)
        verdict = self._verify(checkpoint)
        self.step("read_back", version=checkpoint.version, ok=verdict.ok, reason=verdict.reason)
        if verdict.ok:
            return checkpoint
        if verdict.history_changed and self.mutation:
            self.stale = (checkpoint.version, verdict.reason)
        return None

    def _verify(self, checkpoint: cp.Checkpoint) -> cp.Verdict:
        return compact_model.verify(checkpoint, self.whole, self.config, self.config_fp, self.ids)

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
            self.ctx.slot(CompactState).invalidate = self._invalidate_write

    def _leaving(self, current) -> bool:
        if current is None or len(self.whole) < HISTORY_LIMIT:
            return False
        return self.ids.index(current.last_id) < EARLY_MARGIN

    def _use(self, summary: dict | None, history: list) -> None:
        """The Actor reads ``summary`` (None: none) and then ``history``."""
        ctx = self.ctx
        ctx.blocks = [b for b in ctx.blocks if b.get("id") != BLOCK_ID]
        ctx.history = list(history)
        self.summary = cp.summary_text(summary) if summary is not None else ""
        if summary is not None:
            # Stable until the next compaction, which rewrites the history after it anyway:
            # it stays in the stable prefix, before the history it summarises.
            ctx.place(BLOCK_ID, HEADER + "\n" + self.summary, per_turn=False)

    def project(self) -> None:
        """Context governance (Agent V2 with Compact): what the background would read
        instead of the raw history; ``enforce`` makes it read it (``agentic.plugin``),
        ``shadow`` only records it."""
        agentic = self.ctx.settings.agentic
        governance = agentic.contextGovernance if agentic is not None else None
        if governance is None:
            return
        changed = bool(self.summary) or len(self.ctx.history) != len(self.whole)
        if changed:
            projection = self.ctx.slot(Projection)
            projection.summary = self.summary
            projection.history = [(m.role, m.content) for m in self.ctx.history]
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
        tokens = self.ctx.tokens  # the Actor's tokenizer: the trigger is in its tokens
        extra = tokens.count_messages(dropped) - tokens.count_messages([]) if dropped else 0
        return prompt.prompt_tokens + extra

    async def _compress(self, current) -> bool:
        """Fold a candidate of the compressible groups (``model.fold``), re-render,
        re-count; adopted only if the Actor input now fits."""
        config = self.config
        groups, kept = grouping.split_groups(
            self.ctx.history, config.boundaryMode, config.keepLastCanonicalGroups
        )
        if not groups:
            self.step("nothing_to_compress")
            self.failure = "nothing_to_compress"
            return False

        async def ask_for(messages: list, chained: bool, deadline: float) -> dict:
            return await self._summarise(current if chained else None, messages, deadline)

        done = await compact_model.fold(config, groups, ask_for, self.step)
        base = current if done.chained else None
        checkpoint = cp.successor(
            base,
            self.whole,
            done.folded,
            done.summary,
            config_fp=self.config_fp,
            expected=self.expected,
        )
        if done.abandoned:  # bounded_recent: the oldest uncovered history is given up
            self.step("history_abandoned", messages=len(done.abandoned))
            if current is not None:
                self.step("summary_dropped", reason="chain broken")
        self._use(done.summary, done.rest + grouping.flat(kept))
        tokens = self._demand()
        self.step("compressed", messages=len(done.folded), tokens=tokens)
        if tokens > self.budget:
            self.step("still_too_big", tokens=tokens)
            self.failure = "still_too_big"
            return False
        self.trace.update(
            outcome="compacted", tokens_after=tokens, covered_messages=len(done.folded)
        )
        await self._persist(checkpoint)
        return True

    async def _adopt(self, current) -> bool:
        """The checkpoint prepared in the background (``compact.services.prepare``) in
        place of a compactor call: only when it extends the newest version, was made under
        this config, its covered messages are unchanged, and the prompt then falls below
        the trigger line."""
        ctx = self.ctx
        prepared = await run_db(store.prepared, ctx.conversation.pk, ctx.scenario.pk, self.expected)
        if prepared is None:
            return False
        verdict = self._verify(prepared)
        anchored = prepared.chain == (current.version if current else None) and (
            current is None or prepared.first_id == current.first_id
        )
        # bounded_recent may have given the earlier summary up: a fresh start
        anchored = anchored or (self.recent and prepared.chain is None)
        if not (verdict.ok and anchored):
            self.step("prepared_refused", reason=verdict.reason or "chain_changed")
            return False
        before = list(ctx.history)
        self._use(prepared.summary, cp.after(prepared, self.whole, self.ids))
        tokens = self._demand()
        if budgets.due(tokens, self.trigger):
            self.step("prepared_refused", reason="still_due", tokens=tokens)
            self._use(current.summary if current else None, before)
            return False
        self.step("adopted_prepared", tokens=tokens)
        covered = len(before) - len(ctx.history)
        self.trace.update(
            outcome="compacted", prepared=True, tokens_after=tokens, covered_messages=covered
        )
        await self._persist(prepared)
        return True

    async def _summarise(self, current, folded: list, deadline: float) -> dict:
        ctx, config = self.ctx, self.config
        model_config = await run_db(compact_model.compactor_config, ctx.turn.tenant_id, config)
        speakers = [
            (ctx.user_name if m.role == "user" else ctx.character.name, m.content) for m in folded
        ]
        return await compact_model.ask(
            ctx.turn.tenant,
            model_config,
            config,
            ctx.character.name,
            speakers,
            earlier=cp.summary_text(current.summary) if current else "",
            latest=ctx.user_input,
            turn_id=ctx.turn.id,
            run_db=run_db,
            call_ids=self.trace.setdefault("model_calls", []),
            on_refused=lambda reason: self.step("summary_refused", reason=reason),
            deadline=deadline,
        )

    async def _persist(self, checkpoint: cp.Checkpoint) -> None:
        ctx = self.ctx
        persisted = False
        if not self.mutation:
            self.step("not_saved", reason="request kind may not mutate checkpoints")
        else:
            audit = compact_model.audit(
                self.config, turn_id=str(ctx.turn.id), prepared=bool(self.trace.get("prepared"))
            )
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
        """The failure ladder, from the state before compression was tried: the newest
        valid summary is kept with the groups it does not cover; the oldest of those are
        dropped one by one while the prompt does not fit (``bounded_recent`` gives the
        summary up with the first of them: its chain is broken). Recorded as
        ``degraded``; the compaction is retried in the background (``compact_ahead``)."""
        summary = current.summary if current else None
        self._use(summary, history)
        degraded = self.trace["degraded"] = {
            "reason": self.failure or "not_adopted",
            "summary_kept": current.version if current else None,
            "dropped_groups": 0,
            "retry": "background" if self.mutation else None,
        }
        if tokens <= self.budget:
            self.step("original_fits", tokens=tokens)
            self.trace["outcome"] = "original"
            return
        groups = grouping.of_history(history, self.config.boundaryMode)
        while groups or summary is not None:
            if groups:
                groups = groups[1:]
                degraded["dropped_groups"] += 1
                step = "dropped_group"
            else:  # nothing left to drop but the summary: the last resort
                step = "summary_dropped"
            if summary is not None and (self.recent or step == "summary_dropped"):
                summary = degraded["summary_kept"] = None
                if step == "dropped_group":
                    self.step("summary_dropped", reason="chain broken")
            self._use(summary, grouping.flat(groups))
            tokens = self._demand()
            self.step(step, tokens=tokens, groups_left=len(groups))
            if tokens <= self.budget:
                self.trace.update(outcome="dropped_history", tokens_after=tokens)
                return
        self.trace["outcome"] = "context_overflow"
        raise ContextOverflow(
            message=f"the prompt needs {tokens} tokens even without history; the budget is "
            f"{self.budget}",
            details={"tokens": tokens, "budget": self.budget},
        )
