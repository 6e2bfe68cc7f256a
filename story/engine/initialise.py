"""The story's first state from the initialiser model's proposal (seed 002, Story, "初始化"):
the scene now, the off-screen matters and hidden developments that already exist in the
character's material, seeds for later, and the main and sub lines. The program assigns every
id, the dice and the counters; the character is a protected owner (never hidden as an
undercurrent or a seed); no goal is created here (the first plan makes them), so a future
goal is never written down as a fact.

A proposal: ``{"foreground": {"title"}, "backgrounds": [{"title", "owner", "countdown"}],
"undercurrents": [{"title", "owner"}], "seeds": [{"title", "owner"}], "main": {"theme",
"direction", "expected"}, "sub": {...}}``; anything else, or a capacity exceeded, is refused
(:class:`InitInvalid`) and nothing is built.
"""

from __future__ import annotations

from .narrative import Narrative, StoryLine
from .policy import WorldPolicy
from .rng import Rng
from .world import Background, Foreground, Seed, Undercurrent, World, WorldInvalid, validate

FIELDS = {"foreground", "backgrounds", "undercurrents", "seeds", "main", "sub"}
TEXT_CHARS = 500
MAX_SEEDS = 12
MAX_COUNTDOWN = 12


class InitInvalid(ValueError):
    code = "story_init_invalid"


def build(
    proposal: object, character: str, seed: int, policy: WorldPolicy
) -> tuple[World, Narrative]:
    """The world and narrative the proposal describes, for the character named ``character``."""
    if not isinstance(proposal, dict) or set(proposal) - FIELDS:
        raise InitInvalid(f"an initial story has only these fields: {', '.join(sorted(FIELDS))}")
    world = World(
        foreground=Foreground(
            "w1", clean_text(_obj(proposal, "foreground").get("title"), "foreground.title")
        ),
        protectedOwners=[character],
        nextId=2,
        rng=Rng.seeded(seed),
    )
    for item in _items(proposal, "backgrounds", policy.maxBackgrounds):
        countdown = item.get("countdown", 3)
        if (
            not isinstance(countdown, int)
            or isinstance(countdown, bool)
            or not 1 <= countdown <= MAX_COUNTDOWN
        ):
            raise InitInvalid(f"backgrounds: countdown must be 1..{MAX_COUNTDOWN}")
        world.backgrounds.append(
            Background(world.new_id(), *_titled(item, "backgrounds"), countdown)
        )
    for item in _items(proposal, "undercurrents", policy.maxUndercurrents):
        world.undercurrents.append(Undercurrent(world.new_id(), *_titled(item, "undercurrents")))
    for item in _items(proposal, "seeds", MAX_SEEDS):
        world.seedQueue.append(Seed(world.new_id(), *_titled(item, "seeds")))
    try:
        validate(world, policy)
    except WorldInvalid as exc:
        raise InitInvalid(str(exc)) from exc
    narrative = Narrative(main=_line(proposal, "main"), sub=_line(proposal, "sub"))
    return world, narrative


def _obj(proposal: dict, name: str) -> dict:
    value = proposal.get(name)
    if not isinstance(value, dict):
        raise InitInvalid(f"{name} must be an object")
    return value


def clean_text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InitInvalid(f"{where} must be a non-empty string")
    return value.strip()[:TEXT_CHARS]


def _items(proposal: dict, name: str, most: int) -> list[dict]:
    value = proposal.get(name) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InitInvalid(f"{name} must be a list of objects")
    if len(value) > most:
        raise InitInvalid(f"{name}: at most {most}")
    return value


def _titled(item: dict, where: str) -> tuple[str, str]:
    return clean_text(item.get("title"), f"{where}.title"), clean_text(
        item.get("owner"), f"{where}.owner"
    )


def _line(proposal: dict, name: str) -> StoryLine:
    data = _obj(proposal, name)
    expected = data.get("expected") or ""
    if not isinstance(expected, str):
        raise InitInvalid(f"{name}.expected must be a string")
    return StoryLine(
        theme=clean_text(data.get("theme"), f"{name}.theme"),
        direction=clean_text(data.get("direction"), f"{name}.direction"),
        expected=expected.strip()[:TEXT_CHARS],
    )
