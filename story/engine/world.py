"""The world snapshot (seed 002, Story, "world record"): what is happening in the scene, what
waits off screen and what moves unseen, with the capacities the program keeps.

- ``foreground``: the event the user is in, phase ``start`` → ``develop`` (at most
  ``developMax`` rounds) → ``end``, then a legal successor;
- ``backgrounds`` (≤ ``maxBackgrounds``): established matters off screen with countdowns;
- ``undercurrents`` (≤ ``maxUndercurrents``): hidden developments, stage 1 (atmosphere) →
  2 (signs, changed conditions) → 3 (a refusable invitation);
- ``seedQueue``: material consistent with the world that may become an undercurrent, never a
  fact; ``pendingSignalDemand``: the invitation the user must actually receive;
  ``pendingInjections``/``pendingNextForeground``: consequences and the next scene;
- ``protectedOwners``: the main character, who can never be an undercurrent or a seed;
- the dice (``rng``) and ``round`` (advanced when prose is accepted).

:func:`validate` raises :class:`WorldInvalid` for any snapshot that breaks a capacity or a
rule; every change the engine makes is checked with it, and so is every snapshot read back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .policy import WorldPolicy
from .rng import Rng

PHASES = ("start", "develop", "end")


class WorldInvalid(ValueError):
    code = "story_world_invalid"


@dataclass
class Foreground:
    id: str
    title: str
    phase: str = "start"
    developRounds: int = 0  # noqa: N815


@dataclass
class Background:
    id: str
    title: str
    owner: str
    countdown: int


@dataclass
class Undercurrent:
    id: str
    title: str
    owner: str
    stage: int = 1
    stageRounds: int = 0  # noqa: N815


@dataclass
class Seed:
    id: str
    title: str
    owner: str


@dataclass
class Choice:
    text: str
    expect: str = ""
    isSignal: bool = False  # noqa: N815


@dataclass
class World:
    foreground: Foreground
    backgrounds: list[Background] = field(default_factory=list)
    undercurrents: list[Undercurrent] = field(default_factory=list)
    seedQueue: list[Seed] = field(default_factory=list)  # noqa: N815
    pendingSignalDemand: dict | None = None  # noqa: N815 - {undercurrentId, text}
    pendingInjections: list[dict] = field(default_factory=list)  # noqa: N815
    pendingNextForeground: dict | None = None  # noqa: N815
    choices: list[Choice] = field(default_factory=list)
    protectedOwners: list[str] = field(default_factory=list)  # noqa: N815
    round: int = 0
    nextId: int = 1  # noqa: N815 - ids are the program's: "w<n>"
    rng: Rng = field(default_factory=lambda: Rng.seeded(731))

    def new_id(self) -> str:
        gid = f"w{self.nextId}"
        self.nextId += 1
        return gid

    def as_json(self) -> dict:
        data = asdict(self)
        data["rng"] = self.rng.as_json()
        return data

    @classmethod
    def from_json(cls, data: dict) -> World:
        try:
            world = cls(
                foreground=Foreground(**data["foreground"]),
                backgrounds=[Background(**b) for b in data.get("backgrounds") or []],
                undercurrents=[Undercurrent(**u) for u in data.get("undercurrents") or []],
                seedQueue=[Seed(**s) for s in data.get("seedQueue") or []],
                pendingSignalDemand=data.get("pendingSignalDemand"),
                pendingInjections=list(data.get("pendingInjections") or []),
                pendingNextForeground=data.get("pendingNextForeground"),
                choices=[Choice(**c) for c in data.get("choices") or []],
                protectedOwners=list(data.get("protectedOwners") or []),
                round=int(data.get("round", 0)),
                nextId=int(data.get("nextId", 1)),
                rng=Rng.from_json(data["rng"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise WorldInvalid(f"not a world snapshot: {exc}") from exc
        return world


def validate(world: World, policy: WorldPolicy) -> None:
    fg = world.foreground
    if fg.phase not in PHASES:
        raise WorldInvalid(f"foreground phase {fg.phase!r} is not one of {', '.join(PHASES)}")
    if not 0 <= fg.developRounds <= policy.developMax:
        raise WorldInvalid(
            f"the foreground developed {fg.developRounds} rounds (max {policy.developMax})"
        )
    if len(world.backgrounds) > policy.maxBackgrounds:
        raise WorldInvalid(f"{len(world.backgrounds)} backgrounds (max {policy.maxBackgrounds})")
    if len(world.undercurrents) > policy.maxUndercurrents:
        raise WorldInvalid(
            f"{len(world.undercurrents)} undercurrents (max {policy.maxUndercurrents})"
        )
    protected = {_owner(o) for o in world.protectedOwners}
    hidden: list[Undercurrent | Seed] = [*world.undercurrents, *world.seedQueue]
    for item in hidden:
        if _owner(item.owner) in protected:
            raise WorldInvalid(
                f"{item.id}: the protected character {item.owner!r} cannot be hidden"
            )
    for u in world.undercurrents:
        if u.stage not in (1, 2, 3) or not 0 <= u.stageRounds <= policy.maxStageRounds:
            raise WorldInvalid(f"{u.id}: stage {u.stage} after {u.stageRounds} rounds")
    for b in world.backgrounds:
        if b.countdown < 0:
            raise WorldInvalid(f"{b.id}: a negative countdown")
    ids = [fg.id] + [b.id for b in world.backgrounds] + [x.id for x in hidden]
    if len(ids) != len(set(ids)):
        raise WorldInvalid("ids are not unique")
    if world.round < 0 or world.nextId < 1:
        raise WorldInvalid("counters must not be negative")


def _owner(name: str) -> str:
    return " ".join((name or "").casefold().split())
