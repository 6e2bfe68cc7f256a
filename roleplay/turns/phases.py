"""The phases of a turn around the Actor, where capabilities plug in.

A turn runs: load → read hooks (cheap, synchronous) → **pre-Actor phases** → Actor stream
→ finish (the reply committed) → **committed phases** → ``turn.completed`` → **post-turn
phases**. A plug-in (``plugin.TurnPlugin``) gives a :class:`Phase` as its ``prepare``,
``after_commit`` or ``settle``; the stages run them in the plug-ins' order:

- a pre-Actor phase may call models; it runs with a deadline, honours the player's cancel,
  reports progress to the sockets (``phase.started`` / ``phase.progress`` /
  ``phase.completed``), and adds to the context (``ctx.variables``, ``ctx.blocks``,
  ``ctx.trace``). A failure of an optional phase is recorded and the turn goes on; a
  ``required`` one fails the turn with its code.
- a committed phase runs after the reply is committed and before ``turn.completed``: the
  player's turn ends only when it has answered (seed 000: the external memory's commit).
  Like a post-turn phase it must not change the stored reply, and its failure never loses
  it; keep it rare and short, since the turn's end waits for it.
- a post-turn phase runs after the reply is committed and the player has it; it must not
  change the stored reply, and its failure never loses it. Durable work goes to Celery:
  ``await run_db(enqueue)`` where ``enqueue`` calls ``transaction.on_commit(task.delay)``.

Every phase's outcome and timing go into the turn trace (``trace["phases"]``), which the
console shows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from console.failures import DomainError
from roleplay.llm.errors import ModelCancelled, ModelError
from roleplay.models import TurnKind

from .context import TurnContext
from .plugin import PLUGINS, PluginFailed

logger = logging.getLogger(__name__)

Stage = Literal["pre_actor", "committed", "post_turn"]
Emit = Callable[[dict], Awaitable[None]]
ALL_KINDS = frozenset(TurnKind.values)


class PhaseFailed(PluginFailed):
    """A required pre-Actor phase failed: the turn fails with ``code``."""


@dataclass
class PhaseRun:
    """What a running phase gets besides the context: the turn's cancel, and a way to tell
    the player's sockets how far it got."""

    name: str
    cancel: asyncio.Event
    _emit: Emit
    _turn_id: str

    async def send(self, event: dict) -> None:
        """An event of the phase's own (``story.preparing``...) to the player's sockets."""
        await self._emit(event)

    async def progress(self, **detail: Any) -> None:
        await self._emit(
            {"type": "phase.progress", "turn_id": self._turn_id, "phase": self.name, **detail}
        )


class Laps:
    """Each step's milliseconds within a phase, for its trace section (``laps``)."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round((now - self._last) * 1000, 2)
        self._last = now


@dataclass(frozen=True, kw_only=True)
class Phase:
    """``run(ctx, phase_run)`` for the turn kinds in ``kinds``, within ``deadline_s``; with
    ``applies``, only for the turns it says yes to (a capability a scenario turns on), so
    the others neither run it nor announce it. ``name`` is what the trace and the phase
    events call it; the stage is the plug-in hook it is given as."""

    name: str
    run: Callable[[TurnContext, PhaseRun], Awaitable[None]]
    kinds: frozenset[str] = ALL_KINDS
    deadline_s: float = 30.0
    required: bool = False
    applies: Callable[[TurnContext], bool] | None = None


async def run_stage(
    stage: Stage,
    ctx: TurnContext,
    emit: Emit,
    cancel: asyncio.Event,
    between: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Run the stage's phases in order, recording each in ``ctx.trace["phases"]``.

    ``between`` runs after each phase (the turn renews its lease there). A cancel during a
    pre-Actor phase stops it and raises ``ModelCancelled``; a required phase's failure
    raises :class:`PhaseFailed`."""
    turn_id = str(ctx.turn.id)
    records = ctx.trace.setdefault("phases", [])
    for phase in PLUGINS.stage(stage, ctx.kind):
        if phase.applies is not None and not phase.applies(ctx):
            continue
        await emit({"type": "phase.started", "turn_id": turn_id, "phase": phase.name})
        started = time.perf_counter()
        run = PhaseRun(phase.name, cancel, emit, turn_id)
        outcome, error, message = await _run_one(phase, ctx, run)
        record = {
            "name": phase.name,
            "stage": stage,
            "outcome": outcome,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        }
        if error:
            record["error"] = error
        records.append(record)
        await emit(
            {
                "type": "phase.completed",
                "turn_id": turn_id,
                "phase": phase.name,
                "outcome": outcome,
                "duration_ms": record["duration_ms"],
            }
        )
        if between is not None:
            await between()
        if outcome == "cancelled":
            raise ModelCancelled("cancelled during a phase")
        if outcome != "ok" and phase.required and stage == "pre_actor":
            # A coded failure keeps its own message (which node of a workflow failed...).
            text = f"phase {phase.name} {outcome}" + (f": {message}" if message else "")
            raise PhaseFailed(error or f"phase_{outcome}", text)


async def _run_one(
    phase: Phase, ctx: TurnContext, run: PhaseRun
) -> tuple[str, str | None, str | None]:
    """("ok" | "failed" | "timeout" | "cancelled", error code or None, a coded error's
    message or None) of one phase."""
    if run.cancel.is_set():
        return "cancelled", None, None
    work = asyncio.ensure_future(phase.run(ctx, run))
    stop = asyncio.ensure_future(run.cancel.wait())
    try:
        done, _ = await asyncio.wait(
            {work, stop}, timeout=phase.deadline_s, return_when="FIRST_COMPLETED"
        )
        if work in done:
            work.result()
            return "ok", None, None
        work.cancel()
        await asyncio.gather(work, return_exceptions=True)
        return ("cancelled", None, None) if stop in done else ("timeout", "phase_timeout", None)
    except (DomainError, ModelError) as exc:
        logger.warning("phase %s failed: %s", phase.name, exc)
        return "failed", exc.code, getattr(exc, "message", None) or str(exc)
    except Exception:
        logger.exception("phase %s failed", phase.name)
        return "failed", "phase_error", None
    finally:
        stop.cancel()
