"""Preparing a turn (seed 002, ``PovPrepareTurnTool``) and restoring it
(``restoreStoryPreparedTurn``).

The user's action is ``free`` (text; without a model's reading it is ``normal``), ``intent``
(text and an already decided ``{kind: normal | cue | signal, targetId?}``) or ``choice`` (an
index into the world's saved ``choices``). ``cue`` turns to an existing background or a
stage 2–3 undercurrent, interrupting the current event; ``signal`` answers an invitation the
user actually received. A target must be one of those: no string creates an event. Either may
say whether the companion (the protected main character) goes along (``companionFollows``,
the seed's companion-follow decision; by default it does).

A prepared turn keeps the world it was prepared from, so :func:`restore` replays the same
mechanical decisions (drawing no dice) and refuses a saved stage or flags that differ: a
tampered prepared turn cannot pass as a legal one.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, replace

from .deal import DealState, Dealt, deal
from .mechanics import surface
from .narrative import Narrative
from .policy import NarrativePolicy, WorldPolicy
from .stage import project
from .world import Foreground, World, validate

KINDS = ("normal", "cue", "signal")


class ActionInvalid(ValueError):
    code = "story_action_invalid"


class PreparedTampered(ValueError):
    code = "story_prepared_tampered"


@dataclass(frozen=True)
class Prepared:
    turn_id: str
    action: dict
    intent: dict
    flags: dict
    projection: dict
    world: dict  # the world after preparation
    deal_state: dict
    base: dict  # the world and narrative it was prepared from
    bias: str | None
    fingerprint: str

    def as_json(self) -> dict:
        return {
            "turnId": self.turn_id,
            "action": self.action,
            "intent": self.intent,
            "flags": self.flags,
            "projection": self.projection,
            "world": self.world,
            "dealState": self.deal_state,
            "base": self.base,
            "bias": self.bias,
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_json(cls, data: dict) -> Prepared:
        return cls(
            turn_id=data["turnId"],
            action=data["action"],
            intent=data["intent"],
            flags=data["flags"],
            projection=data["projection"],
            world=data["world"],
            deal_state=data["dealState"],
            base=data["base"],
            bias=data.get("bias"),
            fingerprint=data["fingerprint"],
        )


def read_action(world: World, action: object) -> tuple[str, dict]:
    """(the user's text, the intent) of ``action``; :class:`ActionInvalid` if malformed."""
    if not isinstance(action, dict) or action.get("type") not in ("free", "intent", "choice"):
        raise ActionInvalid("action.type must be free, intent or choice")
    if action["type"] == "choice":
        index = action.get("index")
        if (
            isinstance(index, bool)
            or not isinstance(index, int)
            or not 0 <= index < len(world.choices)
        ):
            raise ActionInvalid("action.index is not one of the saved choices")
        choice = world.choices[index]
        delivered = list(_targets(world, "signal"))
        if choice.isSignal and delivered:  # the newest invitation the user received
            return choice.text, {"kind": "signal", "targetId": delivered[-1]}
        return choice.text, {"kind": "normal"}
    text = action.get("text")
    if not isinstance(text, str):
        raise ActionInvalid("action.text must be a string")
    if action["type"] == "free":
        return text, {"kind": "normal"}
    intent = action.get("intent")
    if not isinstance(intent, dict) or intent.get("kind") not in KINDS:
        raise ActionInvalid("action.intent.kind must be normal, cue or signal")
    follows = intent.get("companionFollows")
    if "companionFollows" in intent and (
        intent["kind"] == "normal" or not isinstance(follows, bool)
    ):
        raise ActionInvalid("action.intent.companionFollows is true or false, for a cue or signal")
    if intent["kind"] == "normal":
        return text, {"kind": "normal"}
    target = intent.get("targetId")
    if target not in _targets(world, intent["kind"]):
        raise ActionInvalid(f"action.intent.targetId {target!r} is not a {intent['kind']} target")
    chosen = {"kind": intent["kind"], "targetId": target}
    if isinstance(follows, bool):
        chosen["companionFollows"] = follows
    return text, chosen


def _targets(world: World, kind: str) -> dict[str, str]:
    """Legal targets of ``kind`` → their titles."""
    if kind == "cue":
        found = {b.id: b.title for b in world.backgrounds}
        found.update({u.id: u.title for u in world.undercurrents if u.stage >= 2})
        return found
    return {
        i["id"]: i.get("title", "")
        for i in world.pendingInjections
        if i.get("kind") == "invitation" and "id" in i
    }


def prepare_turn(
    turn_id: str,
    world: World,
    narrative: Narrative,
    action: dict,
    world_policy: WorldPolicy,
    narrative_policy: NarrativePolicy,
    *,
    bias: str | None = None,
) -> Prepared:
    """The turn's preparation; neither ``world`` nor ``narrative`` is changed."""
    base = {"world": world.as_json(), "narrative": narrative.as_json()}
    text, intent = read_action(world, action)
    after = copy.deepcopy(world)
    flags = {"interrupted": False, "switchedTo": None}
    if intent["kind"] in ("cue", "signal"):
        target = intent["targetId"]
        title = _targets(world, intent["kind"])[target]
        flags = {"interrupted": after.foreground.phase != "end", "switchedTo": target}
        after.foreground = Foreground(id=target, title=title)
        after.backgrounds = [b for b in after.backgrounds if b.id != target]
        after.undercurrents = [u for u in after.undercurrents if u.id != target]
        after.pendingInjections = [i for i in after.pendingInjections if i.get("id") != target]
        if after.pendingSignalDemand and after.pendingSignalDemand["id"] == target:
            after.pendingSignalDemand = None
    validate(after, world_policy)
    dealt, deal_state = _deal(narrative, after.foreground.phase, narrative_policy)
    # A turn to another scene takes the companion along unless the action said otherwise.
    follows = intent.get("companionFollows", True) if flags["switchedTo"] else None
    projection = project(after, narrative, dealt, surface(after, world_policy), text, bias, follows)
    unsigned = Prepared(
        turn_id=turn_id,
        action=action,
        intent=intent,
        flags=flags,
        projection=projection,
        world=after.as_json(),
        deal_state=deal_state.as_json(),
        base=base,
        bias=bias,
        fingerprint="",
    )
    return replace(unsigned, fingerprint=_fingerprint(unsigned.as_json()))


def _deal(narrative: Narrative, phase: str, policy: NarrativePolicy) -> tuple[Dealt, DealState]:
    starve = {"main": narrative.main.starve, "sub": narrative.sub.starve}
    unpaid = {"main": len(narrative.main.unpaid), "sub": len(narrative.sub.unpaid)}
    return deal(
        narrative.cycle.pending,
        phase,
        narrative.deal,
        policy,
        starve=starve,
        unpaid=unpaid,
        completed=set(narrative.clock.completedGoals),
    )


def restore(
    saved: Prepared, world_policy: WorldPolicy, narrative_policy: NarrativePolicy
) -> Prepared:
    """The saved prepared turn, once its mechanical decisions replay to the same stage and
    flags from the world it was prepared from; no dice are drawn. A regenerated reply gets
    the same stage this way."""
    try:
        world = World.from_json(saved.base["world"])
        narrative = Narrative.from_json(saved.base["narrative"])
        replay = prepare_turn(
            saved.turn_id,
            world,
            narrative,
            saved.action,
            world_policy,
            narrative_policy,
            bias=saved.bias,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise PreparedTampered(f"the saved prepared turn cannot be replayed: {exc}") from exc
    if replay.as_json() != saved.as_json():
        raise PreparedTampered("the saved prepared turn does not replay to the same stage")
    return saved


def _fingerprint(prepared: dict) -> str:
    raw = json.dumps(prepared, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()
