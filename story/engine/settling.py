"""The settlement queue of the Story coordinator (seed 002, Story): each event waiting for
its settlement is tried, oldest first (``story_settle``); a settled one may ``rebranch`` a
line; one that fails again is quarantined after 3 distinct positions or 12 positions
(``quarantine``). Pure, no database; :mod:`story.engine.coordinator` calls it."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from . import evidence, quarantine, tools
from .narrative import Narrative
from .rebranch import rebranch
from .settle import SettlementInvalid, settle_event

if TYPE_CHECKING:
    from .coordinator import Preparation, Request


def row(event: dict, status: str) -> dict:
    return {
        "event_id": event["id"],
        "title": event.get("title") or "",
        "status": status,
        "evidence": event.get("evidence") or [],
        "attempts": event.get("attempts") or [],
    }


async def settle_queue(env: dict, req: Request, models: tools.Models, prep: Preparation) -> None:
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
                prep.events.append(row(event, "settled"))
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
        prep.events.append(row(event, "quarantined"))
        prep.diagnostics.append(f"event_quarantined: {event['id']}")
        return narrative, True
    prep.events.append(row(event, "unknown"))
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
