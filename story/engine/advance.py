"""Accepting the prose of a prepared turn (seed 002, ``PovAdvanceWorldTool``): one round of
mechanics, then the world model's proposal, checked. A model interprets meaning only: it may
confirm the pending invitation was delivered, record consequences now in the scene, resolve
injections that the prose used, propose the next scene among the legal candidates and add
seeds (never owned by a protected character). It can never change a clock, an id, a
capacity or a mechanical stage: any other field, or a reference to nothing, is refused.

``advance`` returns ``committed`` (a new world, not yet saved), ``duplicate`` (this turn was
already accepted) or raises :class:`ProposalInvalid` (the caller keeps the prepared turn and
retries: ``pending``)."""

from __future__ import annotations

import copy
from dataclasses import dataclass

from .mechanics import accept_round, deliver_signal
from .policy import WorldPolicy
from .world import Choice, Seed, World, WorldInvalid, validate

FIELDS = {"delivered", "consequences", "resolved", "nextForeground", "seeds", "choices"}
TEXT_CHARS = 500
MAX_NEW = 5


class ProposalInvalid(ValueError):
    code = "story_world_proposal_invalid"


@dataclass(frozen=True)
class Advanced:
    outcome: str  # "committed" or "duplicate"
    world: World
    events: list[dict]


def advance(
    world: World, turn_id: str, accepted_turns: list[str], proposal: object, policy: WorldPolicy
) -> Advanced:
    """The world after the prepared turn ``turn_id``'s prose was accepted. ``world`` is the
    prepared world; ``accepted_turns`` the turns already accepted."""
    if turn_id in accepted_turns:
        return Advanced("duplicate", world, [])
    if proposal is None:
        proposal = {}
    if not isinstance(proposal, dict) or set(proposal) - FIELDS:
        raise ProposalInvalid(
            f"a world proposal has only these fields: {', '.join(sorted(FIELDS))}"
        )
    after = copy.deepcopy(world)
    if proposal.get("delivered") is True:
        after = deliver_signal(after, policy)
    elif proposal.get("delivered") not in (None, False):
        raise ProposalInvalid("delivered must be true or false")
    _resolve(after, proposal.get("resolved"))
    _consequences(after, proposal.get("consequences"))
    _next_foreground(after, proposal.get("nextForeground"))
    _seeds(after, proposal.get("seeds"))
    _choices(after, proposal.get("choices"))
    try:
        validate(after, policy)
    except WorldInvalid as exc:
        raise ProposalInvalid(str(exc)) from exc
    after, events = accept_round(after, policy)
    return Advanced("committed", after, events)


def _texts(value: object, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_NEW:
        raise ProposalInvalid(f"{where} must be a list of at most {MAX_NEW}")
    out = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ProposalInvalid(f"{where} holds only non-empty text")
        out.append(item.strip()[:TEXT_CHARS])
    return out


def _resolve(world: World, value: object) -> None:
    ids = _texts(value, "resolved")
    known = {i.get("id") for i in world.pendingInjections}
    stray = [i for i in ids if i not in known]
    if stray:
        raise ProposalInvalid(f"resolved names {stray[0]!r}, which is not in the scene")
    world.pendingInjections = [i for i in world.pendingInjections if i.get("id") not in ids]


def _consequences(world: World, value: object) -> None:
    for text in _texts(value, "consequences"):
        world.pendingInjections.append({"kind": "consequence", "id": world.new_id(), "title": text})


def _next_foreground(world: World, value: object) -> None:
    if value is None:
        return
    legal = {b.id: b.title for b in world.backgrounds}
    legal.update({i["id"]: i.get("title", "") for i in world.pendingInjections if "id" in i})
    if not isinstance(value, str) or value not in legal:
        raise ProposalInvalid("nextForeground must name a background or an injection in the scene")
    world.pendingNextForeground = {"id": value, "title": legal[value]}
    world.backgrounds = [b for b in world.backgrounds if b.id != value]
    world.pendingInjections = [i for i in world.pendingInjections if i.get("id") != value]


def _seeds(world: World, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, list) or len(value) > MAX_NEW:
        raise ProposalInvalid(f"seeds must be a list of at most {MAX_NEW}")
    for item in value:
        if not isinstance(item, dict) or set(item) - {"title", "owner"}:
            raise ProposalInvalid("a seed is {title, owner}")
        title, owner = item.get("title"), item.get("owner")
        if not isinstance(title, str) or not title.strip() or not isinstance(owner, str):
            raise ProposalInvalid("a seed needs a title and an owner")
        world.seedQueue.append(Seed(world.new_id(), title.strip()[:TEXT_CHARS], owner.strip()))


def _choices(world: World, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, list) or len(value) > MAX_NEW:
        raise ProposalInvalid(f"choices must be a list of at most {MAX_NEW}")
    parsed = []
    for item in value:
        if not isinstance(item, dict) or set(item) - {"text", "expect", "isSignal"}:
            raise ProposalInvalid("a choice is {text, expect, isSignal}")
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ProposalInvalid("a choice needs text")
        parsed.append(
            Choice(
                text.strip()[:TEXT_CHARS],
                str(item.get("expect") or "")[:TEXT_CHARS],
                item.get("isSignal") is True,
            )
        )
    world.choices = parsed
