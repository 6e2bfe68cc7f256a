"""Story in a turn (seed 002, Story), the turn plug-in ``story``: a ``read`` hook (the story
in force read with the turn's other reads), a pre-Actor phase that runs the coordinator
(``story.engine.coordinator``) and gives the Actor its ``[CURRENT STORY STAGE]`` block, and
a post-turn phase that saves the prepared turn once the reply is committed.

- ``story`` (pre-Actor, for a conversation whose scenario has ``storyV1`` on): reads the
  story in force, emits ``story.preparing``, accepts the previous stored reply, settles,
  initialises, reads the action, plans and deals (the model calls go through
  ``story_models``), and saves the acceptance in its own compare-and-set before the Actor
  runs (beyond the seed, whose acceptance is lost when the Actor fails); an acceptance over
  ``maxStateBytes`` is not saved (the old state stays, the trace and ``story.updated``
  say ``failed``) and the Actor still answers. A rollback before
  the stored watermark restores the revision saved at that position. An invalid settlement
  of the previous reply fails the turn (``story_settlement_pending``). The Actor gets the
  stage after its preset's ``story_writer`` instructions, in one system block.
- ``story_save`` (post-turn): one compare-and-set save of the accepted state plus the
  prepared turn, ``pendingActor`` anchored to this reply's id, within
  ``postTurnTimeoutMs``; emits ``story.updated {turn_id, outcome, revision}``. A conflict
  (``stale_write_rejected``) or a state over ``maxStateBytes`` (``failed``) leaves the prose
  as it is. The trace reports the prose and the state separately.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from console.db import run_db
from memory import selectors as message_reads
from roleplay.models import Turn
from roleplay.prompting.default_preset import default_preset
from roleplay.prompting.macros import MacroContext, expand_macros
from roleplay.prompting.presets import STORY_WRITER
from roleplay.story_plugin.model import StoryModels, read_configs
from roleplay.turns.phases import Laps, Phase, PhaseRun
from roleplay.turns.plugin import TurnPlugin
from roleplay.turns.records import LEASE, STORAGE_ERRORS
from roleplay.worldbook_plugin.context import selected_entries
from story import selectors, services
from story.engine import coordinator
from story.engine.policy import parse_policy
from story.engine.route import HistoryMessage, StoryRefused
from story.engine.source import compile_source
from story.engine.tools import ModelUnavailable
from story.errors import ModelRefused, Refused, SettlementPending, StaleWrite, TooLarge
from story.models import StoryStatus

RENEW_S = 10.0
BLOCK_ID = "story:stage"
WRITER_BLOCK_ID = "story:writer"
# The instructions come right before the stage they explain where both share a place (the
# classic layout); placement sorts by order (0 by default), then id.
STAGE_ORDER = 0
KINDS = frozenset({"chat", "continue", "regenerate", "edit_regenerate", "auto_reply"})


@dataclass
class Started:
    """What the post-turn save needs from the pre-Actor phase."""

    prep: coordinator.Preparation
    request: coordinator.Request
    revision: int
    config: Any
    failed: str | None = None  # the acceptance's save failed: nothing is saved after the Actor


@dataclass
class StoryState:
    """The turn's story (``ctx.slot(StoryState)``): what the ``read`` hook read (until the
    phase takes it), and what the pre-Actor phase leaves for the post-turn save."""

    read: tuple | None = None
    started: Started | None = None


def read_hook(ctx, conversation) -> None:
    """The story in force, the source position and the model configs read with the turn's
    other reads (on the database thread that loads the context)."""
    config = ctx.settings.story
    if config is not None:
        ctx.slot(StoryState).read = _read(ctx, config)


def _on(ctx) -> bool:
    return ctx.settings.story is not None


def _started(ctx) -> bool:
    return ctx.slot(StoryState).started is not None


async def prepare(ctx, run: PhaseRun) -> None:
    config = ctx.settings.story
    turn = ctx.turn
    await run.send({"type": "story.preparing", "turn_id": str(turn.id)})
    clock = Laps()
    state = ctx.slot(StoryState)
    if state.read is not None:
        (revision, envelope, position, configs), state.read = state.read, None
    else:
        revision, envelope, position, configs = await run_db(_read, ctx, config)
    clock.lap("read")
    request = _request(ctx, config, position)
    models = StoryModels(turn.tenant, config, turn_id=turn.id, configs=configs)
    keep = asyncio.ensure_future(_keep_lease(turn))  # model calls may outlast the lease
    try:
        restored = None
        if coordinator.route_of(envelope, request).route in ("rollback", "reinitialise"):
            restored, envelope = await run_db(_restorable, ctx, request, envelope)
        prep = await coordinator.prepare(envelope, request, models)
        if restored is not None:
            prep.diagnostics.append(f"restored_revision: {restored}")
        clock.lap("coordinator")
    except coordinator.SettlementPending as exc:
        raise SettlementPending(message=str(exc)) from None
    except StoryRefused as exc:
        raise Refused(message=str(exc)) from None
    except ModelUnavailable as exc:  # an unrecoverable one: refused credentials...
        raise ModelRefused(exc.code, str(exc)) from None
    finally:
        keep.cancel()
    trace = ctx.trace.setdefault("story", {})
    trace.update(prep.trace(), revision=revision, model_calls=models.call_ids)
    failed = None
    if prep.accepted and prep.envelope is not None:
        # A conflict here (an operator's decision meanwhile) fails the turn, nothing written.
        try:
            record = _save(
                ctx, request, revision, prep.envelope, StoryStatus.READY, "accepted", prep, config
            )
            revision = await run_db(services.save, record)
        except TooLarge as exc:
            # The seed's row for a state over its cap: the old state stays, the failure is
            # recorded and the Actor answers; nothing of this turn's story is saved.
            failed = f"{exc.code}: {exc.message}"
            prep.diagnostics.append(failed)
        else:
            prep.events, prep.quarantines = [], []
            trace["accepted_revision"] = revision
        clock.lap("accept_save")
    if prep.block is not None:
        writer = _writer(ctx, trace)
        if writer:  # it changes only with the preset: the stable part of the prompt
            ctx.place(WRITER_BLOCK_ID, writer, per_turn=False, order=STAGE_ORDER - 1)
        trace["position"] = ctx.place(BLOCK_ID, prep.block, order=STAGE_ORDER)
        clock.lap("place")
    trace["timings_ms"] = clock.laps
    state.started = Started(prep, request, revision, config, failed)


def _writer(ctx, trace: dict) -> str:
    """The Actor preset's ``story_writer`` instructions (the seed's POV writer stage
    instructions), placed before the stage block as a block of their own: the stage changes
    every turn, the instructions only with the preset, so a cache-aware layout keeps them in
    the stable prefix (the classic layout sends the two side by side). A preset without the
    prompt (one saved before it existed) gets the shipped text, and the trace says so; a
    preset that disabled it gets none."""
    found = next((p for p in ctx.preset.prompts if p.name == STORY_WRITER), None)
    if found is None:
        found = default_preset().named(STORY_WRITER)
        trace.setdefault("diagnostics", []).append("story_writer_default")
    elif not found.enabled:
        return ""
    variables = {"characterName": ctx.speaker.name}
    return expand_macros(found.content, MacroContext(variables=variables)).text.strip()


async def save(ctx, run: PhaseRun) -> None:
    started = ctx.slot(StoryState).started
    assert started is not None  # the phase applies only then
    prep, request = started.prep, started.request
    trace = ctx.trace.setdefault("story", {})
    trace["prose"] = "succeeded"
    if started.failed is not None:
        trace["state"] = "failed"
        await _updated(run, ctx, "failed", started.revision)
        return
    if prep.prepared is None or prep.envelope is None:
        trace["state"] = "not_written"
        await _updated(run, ctx, "not_written", started.revision)
        return
    envelope = coordinator.pending_envelope(prep, request)
    record = _save(
        ctx,
        request,
        started.revision,
        envelope,
        StoryStatus.WAITING,
        "waiting_for_acceptance",
        prep,
        started.config,
    )
    record.stage, record.message_id = prep.projection, ctx.turn.assistant_message_id
    try:
        revision = await asyncio.wait_for(
            run_db(services.save, record), started.config.postTurnTimeoutMs / 1000
        )
        outcome = "waiting_for_acceptance"
    except StaleWrite:
        revision, outcome = started.revision, "stale_write_rejected"
    except TooLarge as exc:
        revision, outcome = started.revision, "failed"
        trace.setdefault("diagnostics", []).append(f"{exc.code}: {exc.message}")
    except TimeoutError:
        revision, outcome = started.revision, "failed"
        trace.setdefault("diagnostics", []).append("story_save_timeout")
    trace.update(
        state="succeeded" if outcome == "waiting_for_acceptance" else outcome,
        saved_revision=revision,
    )
    await _updated(run, ctx, outcome, revision)


async def _updated(run: PhaseRun, ctx, outcome: str, revision: int) -> None:
    await run.send(
        {
            "type": "story.updated",
            "turn_id": str(ctx.turn.id),
            "outcome": outcome,
            "revision": revision,
        }
    )


async def _keep_lease(turn) -> None:
    """Renew the turn's lease every ``RENEW_S`` while the story prepares."""
    while True:
        await asyncio.sleep(RENEW_S)
        try:
            await run_db(
                Turn.objects.filter(pk=turn.pk).update, lease_expires_at=timezone.now() + LEASE
            )
        except STORAGE_ERRORS:
            pass  # the next renewal, or the phase's end, tries again


def _restorable(ctx, request, envelope) -> tuple[int | None, dict | None]:
    """After a rollback, or when the history no longer matches the pending reply: the newest
    revision saved before this position that the history still matches (beyond the seed,
    which goes read-only or re-initialises)."""
    candidates = selectors.revisions_before(
        ctx.conversation.pk, ctx.scenario.pk, request.source_position
    )
    for number, saved in candidates:
        if coordinator.route_of(saved, request).route not in ("rollback", "reinitialise"):
            return number, saved
    return None, envelope


def _read(ctx, config) -> tuple[int, dict | None, int, dict]:
    """(revision, envelope, this request's source position, the model configs), in one
    trip to the database thread."""
    revision, envelope = selectors.read_for_turn(ctx.conversation.pk, ctx.scenario.pk)
    conversation = ctx.conversation
    before = message_reads.count_chat_messages(conversation.tenant, conversation.session_id)
    # The stored messages before this request: a chat turn's own message is stored already.
    if ctx.turn.user_message_id and ctx.kind == "chat":
        before -= 1
    return revision, envelope, max(before, 0) + 1, read_configs(ctx.turn.tenant_id, config)


def _request(ctx, config, position: int) -> coordinator.Request:
    world_policy, narrative_policy = parse_policy(getattr(config, "policy", None))
    character = ctx.character
    history = [HistoryMessage(str(m.id), m.role, m.content) for m in ctx.history]
    definition = "\n".join(
        part
        for part in (
            character.description,
            character.personality,
            character.scenario,
            character.system_prompt,
        )
        if (part or "").strip()
    )
    return coordinator.Request(
        kind=ctx.kind,
        turn_id=str(ctx.turn.id),
        character_id=str(character.pk),
        character_name=character.name,
        history=history,
        user_text=ctx.user_input,
        user_message_id=str(ctx.turn.user_message_id) if ctx.turn.user_message_id else None,
        assistant_message_id=str(ctx.turn.assistant_message_id),
        source_position=position,
        source=compile_source(
            character.name, definition, ctx.greeting, [(m.role, m.content) for m in ctx.history]
        ),
        seed=config.seed,
        lore=_lore(ctx),
        world_policy=world_policy,
        narrative_policy=narrative_policy,
    )


def _lore(ctx) -> list[dict]:
    """The worldbook entries this turn selected, with the books' revisions."""
    entries = selected_entries(ctx)
    if not entries:
        return []
    return [{"books": ctx.trace["worldbook"].get("books", [])}, *entries]


def _save(
    ctx, request, expected: int, envelope: dict, status: str, outcome: str, prep, config
) -> services.Save:
    return services.Save(
        tenant_id=ctx.turn.tenant_id,
        conversation_id=ctx.conversation.pk,
        scenario_id=ctx.scenario.pk,
        character_id=ctx.character.pk,
        expected=expected,
        envelope=envelope,
        status=status,
        outcome=outcome,
        max_bytes=config.maxStateBytes,
        source_position=int(envelope.get("sourceWatermark") or 0),
        turn_id=ctx.turn.pk,
        events=list(prep.events),
        quarantines=list(prep.quarantines),
    )


class StoryPlugin(TurnPlugin):
    name = "story"
    # Its planner reads the worldbook's selection; its block follows the others'.
    after = ("worldbook", "memory_pack", "agentic")
    prepare = Phase(
        name="story", run=prepare, kinds=KINDS, deadline_s=900.0, required=True, applies=_on
    )
    settle = Phase(name="story_save", run=save, kinds=KINDS, deadline_s=180.0, applies=_started)

    def read(self, ctx, conversation) -> None:
        read_hook(ctx, conversation)


PLUGIN = StoryPlugin()
