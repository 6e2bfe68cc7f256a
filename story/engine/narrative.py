"""The narrative snapshot (seed 002, Story, "narrative record"): why the story moves and how
far it got.

- ``main``/``sub``: theme, direction, the experience expected, rewards still owed
  (``unpaid``), progress (``cursor``) and settled events without progress (``starve``);
- ``cycle``: the goals being tried (``pending``), whether a plan is needed, its number, and
  the promotion test once ceil(2n/3) goals are done (``trialSince``);
- ``emotion``: target (set by a plan, with its ``label``) and observed (set by a settled
  event) valence/arousal/dominance, each in -1..1 (:mod:`story.engine.emotion`);
- ``clock``: settled event ids, completed goals, recent explicit user directions, the goal
  dealt this turn and ``eventCount`` (advanced only when an event settles with evidence);
- ``deal``: the rotation state of :mod:`story.engine.deal`; ``nextGoal``: the next goal id.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .deal import DealState
from .emotion import AXES, neutral
from .goals import Goal

RECENT_DIRECTIONS = 12
SETTLED_KEPT = 200


class NarrativeInvalid(ValueError):
    code = "story_narrative_invalid"


@dataclass
class StoryLine:
    theme: str
    direction: str
    expected: str = ""
    unpaid: list[str] = field(default_factory=list)
    cursor: int = 0
    starve: int = 0


@dataclass
class Cycle:
    pending: list[Goal] = field(default_factory=list)
    needPlan: bool = True  # noqa: N815
    number: int = 1
    trialSince: int | None = None  # noqa: N815 - eventCount when the promotion test began


@dataclass
class Clock:
    settledEvents: list[str] = field(default_factory=list)  # noqa: N815
    completedGoals: list[str] = field(default_factory=list)  # noqa: N815
    recentDirections: list[str | None] = field(default_factory=list)  # noqa: N815
    dealtThisTurn: str | None = None  # noqa: N815
    eventCount: int = 0  # noqa: N815


@dataclass
class Narrative:
    main: StoryLine
    sub: StoryLine
    cycle: Cycle = field(default_factory=Cycle)
    emotion: dict = field(default_factory=lambda: neutral_emotion())
    clock: Clock = field(default_factory=Clock)
    deal: DealState = field(default_factory=DealState)
    nextGoal: int = 1  # noqa: N815

    def line(self, name: str) -> StoryLine:
        return self.main if name == "main" else self.sub

    def as_json(self) -> dict:
        data = asdict(self)
        data["cycle"]["pending"] = [g.as_json() for g in self.cycle.pending]
        data["deal"] = self.deal.as_json()
        return data

    @classmethod
    def from_json(cls, data: dict) -> Narrative:
        try:
            cycle = dict(data.get("cycle") or {})
            cycle["pending"] = [Goal.from_json(g) for g in cycle.get("pending") or []]
            narrative = cls(
                main=StoryLine(**data["main"]),
                sub=StoryLine(**data["sub"]),
                cycle=Cycle(**cycle),
                emotion=data.get("emotion") or neutral_emotion(),
                clock=Clock(**(data.get("clock") or {})),
                deal=DealState.from_json(data.get("deal") or {}),
                nextGoal=int(data.get("nextGoal", 1)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise NarrativeInvalid(f"not a narrative snapshot: {exc}") from exc
        check(narrative)
        return narrative


def neutral_emotion() -> dict:
    return neutral()


def check(narrative: Narrative) -> None:
    for part in ("target", "observed"):
        values = narrative.emotion.get(part) or {}
        if set(values) != set(AXES) or not all(_axis(v) for v in values.values()):
            raise NarrativeInvalid(f"emotion.{part} needs {', '.join(AXES)} within -1..1")
    if not isinstance(narrative.emotion.get("label", ""), str):
        raise NarrativeInvalid("emotion.label must be text")
    for line in (narrative.main, narrative.sub):
        if line.cursor < 0 or line.starve < 0:
            raise NarrativeInvalid("line counters must not be negative")
    ids = [g.id for g in narrative.cycle.pending]
    if len(ids) != len(set(ids)):
        raise NarrativeInvalid("goal ids are not unique")
    if narrative.clock.eventCount < 0 or narrative.nextGoal < 1:
        raise NarrativeInvalid("counters must not be negative")


def _axis(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and -1.0 <= value <= 1.0
