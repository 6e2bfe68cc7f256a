"""The Story coordinator's work before the Actor (seed 002, Story, "一次请求怎样运行"): pure,
no database; the runtime reads the envelope, calls :func:`prepare`, saves what it says, gives
the Actor the stage block, and after the Actor succeeds saves :func:`pending_envelope`.

Per request: route (the failure table, ``route``) → when a reply waits for acceptance,
accept the **stored** reply (read by id from the history; an edited reply is what counts;
the new input never enters it): ``story_advance``, then its evidence joins the current event,
and an event that ended or was interrupted goes to the settlement queue → settle the queue
(``story_settle``; ``unknown`` keeps the references and retries on later requests; a
``rebranch`` or ``plan-cycle`` follows) with quarantine after 3 distinct positions or 12
positions → initialise when there is no state or the history no longer matches
(``story_init``) → read the action (``story_action``) → plan when needed and nothing blocks
(``story_plan``) → prepare and deal (dealing pauses while an event waits for its
settlement) → the ``[CURRENT STORY STAGE]`` block.

The envelope: ``{version, character, sourceWatermark, world, narrative, acceptedTurns, event,
unresolved, nextEvent, pendingActor, acceptedMessage}``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from . import asks, evidence, settling, tools
from .advance import advance
from .initialise import build
from .narrative import Narrative
from .policy import NarrativePolicy, WorldPolicy
from .prepare import Prepared, PreparedTampered, prepare_turn, restore
from .route import CONTINUE_TEXT, HistoryMessage, Route, StoryRefused, decide
from .source import StorySource
from .stage import render
from .world import World

VERSION = 1
ACCEPTED_KEPT = 64
INJECTIONS_KEPT = 8


class SettlementPending(Exception):
    """The previous reply's world settlement failed twice (or its model is unavailable):
    the old prepared turn is kept and the request fails (``story_settlement_pending``)."""

    code = "story_settlement_pending"


@dataclass
class Request:
    kind: str
    turn_id: str
    character_id: str
    character_name: str
    history: list[HistoryMessage]  # visible user/assistant messages before this request
    user_text: str | None
    user_message_id: str | None
    assistant_message_id: str
    source_position: int  # this request's message position
    source: StorySource
    seed: int = 731
    # The worldbook entries the turn selected ({id, title, content}) and the books'
    # revisions, for the planner and the settlement (beyond the seed).
    lore: list[dict] = field(default_factory=list)
    world_policy: WorldPolicy = field(default_factory=WorldPolicy)
    narrative_policy: NarrativePolicy = field(default_factory=NarrativePolicy)


@dataclass
class Preparation:
    route: str
    block: str | None = None  # what the Actor gets; None: the plain Actor
    projection: dict | None = None
    # The envelope after accepting the previous reply (and initialising): what the
    # post-turn save builds on. None: nothing to write.
    envelope: dict | None = None
    accepted: bool = False  # the envelope accepted a reply: saved before the Actor runs
    prepared: Prepared | None = None
    events: list[dict] = field(default_factory=list)  # event rows the saves write
    quarantines: list[dict] = field(default_factory=list)
    log: tools.Log = field(default_factory=tools.Log)
    diagnostics: list[str] = field(default_factory=list)

    def trace(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "tools": self.log.calls,
            "diagnostics": self.diagnostics,
            "stage": self.block is not None,
        }


async def prepare(envelope: dict | None, req: Request, models: tools.Models) -> Preparation:
    """What this request does with the story; raises :class:`SettlementPending` and
    ``StoryRefused`` (another character's state)."""
    route = route_of(envelope, req)
    prep = Preparation(route.route)
    if route.route == "inherit":
        return _inherit(envelope, req, prep)
    if route.route == "rollback":
        prep.diagnostics.append("read_only_before_watermark")
        return prep
    env = copy.deepcopy(envelope) if envelope else None
    if route.route == "accept_then_prepare" and env is not None:
        try:
            await _accept(env, req, models, prep)
        except PreparedTampered:
            prep.diagnostics.append("prepared_tampered")
            route, env = Route("reinitialise", "tampered", route.action, route.evidence_kind), None
    if env is None or route.route in ("initialise", "reinitialise"):
        env = await _initialise(envelope, req, models, prep)
        if env is None:
            return prep  # the plain Actor, nothing written
    prep.envelope = env
    await settling.settle_queue(env, req, models, prep)
    await _prepare(env, req, route, models, prep)
    return prep


async def settle_waiting(envelope: dict, req: Request, models: tools.Models) -> Preparation:
    """Retry the events waiting for their settlement, outside any turn (a periodic task):
    ``envelope`` is not changed; the result's envelope is the one to save when
    ``prep.events`` says something moved. ``req.source_position`` is the stored watermark,
    so a retry here is never a new position for the quarantine rule."""
    prep = Preparation("settle_waiting", envelope=copy.deepcopy(envelope))
    assert prep.envelope is not None
    await settling.settle_queue(prep.envelope, req, models, prep)
    return prep


def route_of(envelope: dict | None, req: Request) -> Route:
    """What the request does (``route.decide``); a ``continue`` of the reply that waits for
    acceptance goes on under that reply's stage (here a continue extends the same message,
    so it is still one reply to accept)."""
    pending = (envelope or {}).get("pendingActor") or {}
    if req.kind == "continue" and pending.get("messageId") == req.assistant_message_id:
        return Route("inherit", "a continued reply keeps its stage")
    return decide(
        envelope,
        kind=req.kind,
        character_id=req.character_id,
        history=req.history,
        user_text=req.user_text,
        source_position=req.source_position,
    )


def pending_envelope(prep: Preparation, req: Request) -> dict:
    """The envelope to save once the Actor succeeded: the accepted state plus the prepared
    turn waiting for this reply's acceptance (the reply text is never copied)."""
    assert prep.envelope is not None and prep.prepared is not None
    env = copy.deepcopy(prep.envelope)
    env["pendingActor"] = {
        "messageId": req.assistant_message_id,
        "userMessageId": req.user_message_id,
        "userContentHash": evidence.digest(req.user_text or ""),
        "sourcePosition": req.source_position,
        "evidenceKind": "synthetic_continue" if req.kind == "continue" else "user_action",
        "stage": prep.projection,
        "prepared": prep.prepared.as_json(),
    }
    env["sourceWatermark"] = req.source_position
    return env


def _inherit(envelope: dict | None, req: Request, prep: Preparation) -> Preparation:
    """A regenerated reply gets the stage its turn was prepared with (restored, no dice)."""
    pending = (envelope or {}).get("pendingActor") or {}
    if pending.get("messageId") != req.assistant_message_id:
        return prep
    try:
        saved = restore(
            Prepared.from_json(pending["prepared"]), req.world_policy, req.narrative_policy
        )
    except (PreparedTampered, KeyError, TypeError, ValueError):
        prep.diagnostics.append("prepared_tampered")
        return prep
    prep.projection, prep.block = saved.projection, render(saved.projection)
    return prep


async def _initialise(
    old: dict | None, req: Request, models: tools.Models, prep: Preparation
) -> dict | None:
    async def ask(model_input: str) -> tuple[World, Narrative]:
        return await tools.call(
            models,
            prep.log,
            "story_init",
            model_input,
            lambda data: build(data, req.character_name, req.seed, req.world_policy),
        )

    material = tools.user_text(source=req.source.render(), latest_user_query=req.user_text)
    try:
        world, narrative = await ask(material)
    except (tools.ToolInvalid, tools.ModelUnavailable) as exc:
        tools.tolerated(exc)
        prep.diagnostics.append(f"story_init_failed: {getattr(exc, 'code', exc)}")
        return None
    number = int((old or {}).get("nextEvent") or 1)
    return {
        "version": VERSION,
        "character": req.character_id,
        "sourceWatermark": 0,
        "world": world.as_json(),
        "narrative": narrative.as_json(),
        "acceptedTurns": [],
        "event": _new_event(number, world),
        "unresolved": [],
        "nextEvent": number + 1,
        "pendingActor": None,
        "acceptedMessage": None,
    }


def _new_event(number: int, world: World) -> dict:
    return {
        "id": f"e{number}",
        "title": world.foreground.title,
        "foreground": world.foreground.id,
        "evidence": [],
        "attempts": [],
    }


async def _accept(env: dict, req: Request, models: tools.Models, prep: Preparation) -> None:
    """Accept the stored reply the pending prepared turn waits for."""
    pending = env["pendingActor"]
    try:
        saved = restore(
            Prepared.from_json(pending["prepared"]), req.world_policy, req.narrative_policy
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise PreparedTampered(str(exc)) from exc
    by_id = {m.id: m for m in req.history}
    prose = by_id[pending["messageId"]].text
    user = by_id.get(pending.get("userMessageId") or "")
    user_action = user.text if user is not None else CONTINUE_TEXT
    world = World.from_json(saved.world)
    accepted = list(env.get("acceptedTurns") or [])
    material = tools.user_text(
        stage=saved.projection,
        invitation=world.pendingSignalDemand,
        injections=world.pendingInjections,
        successor_candidates=[{"id": b.id, "title": b.title} for b in world.backgrounds],
        user_action=user_action,
        accepted_reply=prose,
    )
    try:
        result = await tools.call(
            models,
            prep.log,
            "story_advance",
            material,
            lambda data: advance(
                world, saved.turn_id, accepted, _advance_proposal(data), req.world_policy
            ),
        )
    except (tools.ToolInvalid, tools.ModelUnavailable) as exc:
        tools.tolerated(exc)
        raise SettlementPending(f"the previous reply could not be settled: {exc}") from exc
    after = result.world
    after.pendingInjections = after.pendingInjections[-INJECTIONS_KEPT:]
    env["world"] = after.as_json()
    env["acceptedTurns"] = (accepted + [saved.turn_id])[-ACCEPTED_KEPT:]
    env["narrative"] = _with_deal(env["narrative"], saved)
    position = int(pending.get("sourcePosition") or 0)
    event = env.get("event") or _new_event(int(env.get("nextEvent") or 1), after)
    if user is not None:
        kind: evidence.Kind = (
            "synthetic_continue"
            if pending.get("evidenceKind") == "synthetic_continue"
            else "user_action"
        )
        event["evidence"].append(evidence.capture(user.id, user.text, kind, position).as_json())
    event["evidence"].append(
        evidence.capture(pending["messageId"], prose, "prose", position + 1).as_json()
    )
    ended = after.foreground.id != event.get("foreground") or saved.flags.get("interrupted")
    if ended:
        event["interrupted"] = bool(saved.flags.get("interrupted"))
        env["unresolved"] = list(env.get("unresolved") or []) + [event]
        prep.events.append(settling.row(event, "unknown"))
        number = int(env.get("nextEvent") or 1)
        env["event"], env["nextEvent"] = _new_event(number, after), number + 1
    else:
        env["event"] = event
    prep.events.append(settling.row(env["event"], "open"))
    env["acceptedMessage"] = {
        "messageId": pending["messageId"],
        "sha256": evidence.digest(prose),
        "turnId": saved.turn_id,
    }
    env["pendingActor"] = None
    env["sourceWatermark"] = position + 1
    prep.accepted = True


def _advance_proposal(data: Any) -> Any:
    """The schema's ``nextForeground`` is an id; an empty list or null means none."""
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if v is not None}
    return data


def _with_deal(narrative: dict, saved: Prepared) -> dict:
    """The narrative with the deal the accepted turn made (its rotation counts)."""
    after = dict(narrative)
    after["deal"] = saved.deal_state
    return after


async def _prepare(
    env: dict, req: Request, route: Route, models: tools.Models, prep: Preparation
) -> None:
    world = World.from_json(env["world"])
    narrative = Narrative.from_json(env["narrative"])
    action = await asks.read_action(
        world, route.action or {"type": "free", "text": ""}, req, models, prep
    )
    blocked = bool(env.get("unresolved"))
    if narrative.cycle.needPlan and not blocked:
        narrative = await asks.plan(narrative, req, models, prep)
        env["narrative"] = narrative.as_json()
    if blocked:
        prep.diagnostics.append("dealing_paused")
        dealing = copy.deepcopy(narrative)
        dealing.cycle.pending = []
    else:
        dealing = narrative
    prepared = prepare_turn(
        req.turn_id, world, dealing, action, req.world_policy, req.narrative_policy
    )
    prep.prepared, prep.projection = prepared, prepared.projection
    prep.block = render(prepared.projection)


__all__ = [
    "Preparation",
    "Request",
    "SettlementPending",
    "StoryRefused",
    "pending_envelope",
    "prepare",
    "route_of",
    "settle_waiting",
]
