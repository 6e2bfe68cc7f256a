"""The front tool loop in a turn, the turn plug-in ``frontloop`` (``docs/front-loop.md``):
with a scenario's ``preActorDirector``, a ``chat``, ``regenerate`` or ``continue`` turn is
driven by the controller model (its ``generate`` hook) instead of one direct Actor call.

The rules are the pure engine's (``engine.loop.run_front_loop``); this module gives it the
turn (``ports.TurnPorts``) and keeps what it did: the segments in the reply message's
metadata (``segments[]``: text, response mode, usage), every step and decision in
``trace["front_loop"]``. A ``propagate`` ending fails the turn as a direct Actor failure
would (the Actor's error, or the player's cancel); every other ending keeps a reply.

- ``regenerate``: the loop runs again for the new alternative, from the same player input.
- ``continue``: the loop goes on from the stored reply (its segments continue it), with a
  budget of its own; the segments are in the turn's trace (a continued message keeps the
  metadata it had).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from console.db import run_db
from roleplay.dio import plugin as dio
from roleplay.frontloop.engine import DirectorConfig
from roleplay.frontloop.engine.loop import LoopSettings, run_front_loop
from roleplay.frontloop.engine.prompt import FRONT_CONTROLLER_PROMPT, FRONT_CONTROLLER_ROLE
from roleplay.frontloop.engine.record import LoopRecord
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.gateway import provider_config
from roleplay.models import ModelConfig, TurnKind
from roleplay.presets.roles import RoleUnavailable, role_system
from roleplay.prompting.macros import MacroContext, expand_macros
from roleplay.quotas.engine.periods import capped
from roleplay.turns import hub
from roleplay.turns.context import TurnContext
from roleplay.turns.phases import Phase
from roleplay.turns.plugin import PluginFailed, TurnPlugin
from roleplay.turns.reply import Reply

from . import pictures
from .ports import Pictures, TurnPorts

LOOP_KINDS = frozenset({TurnKind.CHAT, TurnKind.REGENERATE, TurnKind.CONTINUE})
MAX_TRACE_STEPS = 40  # the loop notes at most ~3 entries a step, 13 steps


@dataclass
class FrontLoopState:
    """What the loop left for the rest of the turn (the pictures to draw once committed)."""

    pictures: Pictures = field(default_factory=Pictures)


async def _pictures(ctx: TurnContext, run) -> None:
    """The pictures the reply scheduled: their slots on the stored message, the drawings
    queued, ``image.scheduled`` to the sockets (``pictures.reserve``)."""
    state = ctx.slot(FrontLoopState)
    director = ctx.settings.front_loop
    events = await run_db(pictures.reserve, ctx, list(state.pictures.wanted), director)
    for event in events:
        await hub.announce(str(ctx.conversation.pk), event)
    ctx.trace.setdefault("front_loop", {})["slots"] = [e["index"] for e in events]


class FrontLoopPlugin(TurnPlugin):
    name = "frontloop"
    after = ("compact",)
    settle = Phase(
        name="frontloop_pictures",
        run=_pictures,
        kinds=LOOP_KINDS,
        applies=lambda ctx: bool(ctx.slot(FrontLoopState).pictures.wanted) and ctx.record,
    )

    async def generate(self, ctx: TurnContext, reply: Reply) -> bool:
        director = ctx.settings.front_loop
        if director is None or ctx.kind not in LOOP_KINDS:
            return False
        state = ctx.slot(FrontLoopState)
        scenario = ctx.scenario
        state.pictures.available = bool(
            director.wants_images
            and scenario is not None
            and scenario.image_config_id
            and ctx.admission.allows("images")  # the player's plan (roleplay.quotas)
        )
        controller, prompt = await run_db(_controller, ctx, director)
        ports = TurnPorts(ctx, reply, controller, state.pictures)
        settings = LoopSettings(
            director,
            player_input=ctx.user_input or "",
            controller_prompt=prompt,
            actor_max_tokens=capped(
                provider_config(ctx.config).max_output_tokens, ctx.admission.max_reply_tokens
            ),
            image_config=state.pictures.available,
            dio=dio.offered(ctx),
        )
        record = LoopRecord()
        try:
            outcome = await run_front_loop(ports, settings, record=record)
        finally:
            ctx.trace["front_loop"] = _trace(record, controller, director)
        ctx.trace["front_loop"]["ending"] = outcome.ending
        if outcome.ending == "propagate":
            if outcome.error is not None:
                raise outcome.error
            reason = outcome.decision.reason if outcome.decision else "the loop failed"
            raise PluginFailed("front_loop_failed", reason)
        ctx.message_metadata["segments"] = [s.to_json() for s in outcome.segments]
        return True


def _controller(ctx: TurnContext, director: DirectorConfig) -> tuple[ModelConfig | None, str]:
    """The controller's model config (by id or name; None when it is gone, and then its
    calls fail and the loop falls back to direct generation) and its system prompt: the
    ``front_controller`` role prompt of its preset (``presets.roles``), the character named;
    the shipped text when the preset lost it after the scenario was saved."""
    ref = director.model_config_id
    config = model_configs_by_ref(ctx.turn.tenant_id, [ref]).get(ref)
    variables = {"characterName": ctx.speaker.name}
    try:
        return config, role_system(config, FRONT_CONTROLLER_ROLE, variables)
    except RoleUnavailable:
        return config, expand_macros(
            FRONT_CONTROLLER_PROMPT, MacroContext(variables=variables)
        ).text


def _trace(record: LoopRecord, controller: ModelConfig | None, director) -> dict[str, Any]:
    return {
        "controller": str(controller.pk) if controller else director.model_config_id,
        "controller_found": controller is not None,
        "steps": record.steps,
        "actor_steps": record.actor_steps,
        "segments": len(record.segments),
        "images": list(record.pictured),
        "tokens_left": record.budget.left,
        "log": record.trace[:MAX_TRACE_STEPS],
    }


PLUGIN = FrontLoopPlugin()
