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
import functools
from dataclasses import dataclass, field
from typing import Any

from . import asks, evidence, quarantine, tools
from .advance import advance
from .initialise import build
from .narrative import Narrative
from .policy import NarrativePolicy, WorldPolicy
from .prepare import Prepared, PreparedTampered, prepare_turn, restore
from .rebranch import rebranch
from .route import CONTINUE_TEXT, HistoryMessage, Route, StoryRefused, decide
from .settle import SettlementInvalid, settle_event
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
    await _settle_queue(env, req, models, prep)
    await _prepare(env, req, route, models, prep)
    return prep


async def settle_waiting(envelope: dict, req: Request, models: tools.Models) -> Preparation:
    """Retry the events waiting for their settlement, outside any turn (a periodic task):
    ``envelope`` is not changed; the result's envelope is the one to save when
    ``prep.events`` says something moved. ``req.source_position`` is the stored watermark,
    so a retry here is never a new position for the quarantine rule."""
    prep = Preparation("settle_waiting", envelope=copy.deepcopy(envelope))
    assert prep.envelope is not None
    await _settle_queue(prep.envelope, req, models, prep)
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
        prep.events.append(_row(event, "unknown"))
        number = int(env.get("nextEvent") or 1)
        env["event"], env["nextEvent"] = _new_event(number, after), number + 1
    else:
        env["event"] = event
    prep.events.append(_row(env["event"], "open"))
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


def _row(event: dict, status: str) -> dict:
    return {
        "event_id": event["id"],
        "title": event.get("title") or "",
        "status": status,
        "evidence": event.get("evidence") or [],
        "attempts": event.get("attempts") or [],
    }


async def _settle_queue(env: dict, req: Request, models: tools.Models, prep: Preparation) -> None:
    """Try each event waiting for its settlement, oldest first."""
    texts = {m.id: m.text for m in req.history}
    waiting = []
    narrative = Narrative.from_json(env["narrative"])
    for event in env.get("unresolved") or []:
        narrative, done = await _settle_one(narrative, event, texts, req, models, prep)
        if not done:
            waiting.append(event)
    env["narrative"] = narrative.as_json()
    env["unresolved"] = waiting


async def _settle_one(
    narrative: Narrative,
    event: dict,
    texts: dict[str, str],
    req: Request,
    models: tools.Models,
    prep: Preparation,
) -> tuple[Narrative, bool]:
    pieces = [evidence.Evidence.from_json(e) for e in event.get("evidence") or []]
    kinds = {e.message_id: e.kind for e in pieces}
    lost = evidence.changed(pieces, {mid: texts.get(mid) for mid in kinds})
    outcome, diagnostic = "unknown", ""
    if lost:
        outcome, diagnostic = "evidence_changed", f"{len(lost)} piece(s) of evidence changed"
    else:
        material = tools.user_text(
            goals=[g.as_json() for g in narrative.cycle.pending if not g.done],
            main=narrative.main.direction,
            sub=narrative.sub.direction,
            interrupted=bool(event.get("interrupted")),
            lore=req.lore,
            event=[
                {"message_id": e.message_id, "kind": e.kind, "text": texts[e.message_id]}
                for e in pieces
            ],
        )
        try:
            settled = await tools.call(
                models,
                prep.log,
                "story_settle",
                material,
                lambda data: settle_event(
                    narrative, event["id"], data, kinds, req.narrative_policy
                ),
            )
        except (tools.ToolInvalid, tools.ModelUnavailable, SettlementInvalid) as exc:
            tools.tolerated(exc)
            outcome, diagnostic = "invalid", str(exc)[:500]
        else:
            if settled.outcome in ("settled", "duplicate"):
                prep.events.append(_row(event, "settled"))
                prep.diagnostics += settled.diagnostics
                return await _follow(settled.narrative, settled.actions, req, models, prep), True
            diagnostic = "; ".join(settled.diagnostics)
    return _attempt_failed(narrative, event, outcome, diagnostic, req, prep)


def _attempt_failed(
    narrative: Narrative,
    event: dict,
    outcome: str,
    diagnostic: str,
    req: Request,
    prep: Preparation,
) -> tuple[Narrative, bool]:
    unresolved = quarantine.Unresolved(
        event["id"],
        list(event.get("evidence") or []),
        [quarantine.Attempt(**a) for a in event.get("attempts") or []],
    )
    quarantine.record_attempt(unresolved, req.source_position, outcome, diagnostic)
    event["attempts"] = [a.__dict__ for a in unresolved.attempts]
    if quarantine.quarantine_due(unresolved, req.source_position):
        record = quarantine.quarantine_record(unresolved, req.source_position, outcome)
        record["interrupted"] = bool(event.get("interrupted"))
        prep.quarantines.append({"event_id": event["id"], "record": record})
        prep.events.append(_row(event, "quarantined"))
        prep.diagnostics.append(f"event_quarantined: {event['id']}")
        return narrative, True
    prep.events.append(_row(event, "unknown"))
    return narrative, False


async def _follow(
    narrative: Narrative, actions: list[dict], req: Request, models: tools.Models, prep: Preparation
) -> Narrative:
    """Run a settlement's ``rebranch`` (a ``plan-cycle`` is the ``needPlan`` flag)."""
    for action in actions:
        if action.get("type") != "rebranch":
            continue
        scope, direction = action["scope"], action.get("direction")
        line = narrative.line(scope)
        material = tools.user_text(
            scope=scope,
            direction=direction,
            line={"theme": line.theme, "direction": line.direction, "unpaid": line.unpaid},
            setting=req.source.render(),
        )
        current = narrative
        try:
            narrative = await tools.call(
                models,
                prep.log,
                "story_rebranch",
                material,
                functools.partial(_rebranched, current, scope, direction),
            )
        except (tools.ToolInvalid, tools.ModelUnavailable) as exc:
            tools.tolerated(exc)
            prep.diagnostics.append(f"story_rebranch_failed: {getattr(exc, 'code', exc)}")
    return narrative


def _rebranched(narrative: Narrative, scope: str, direction: str | None, data: Any) -> Narrative:
    return rebranch(narrative, scope, data, direction)


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
