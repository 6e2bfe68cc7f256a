"""The world's and the narrative's policy numbers (seed 002, Story, "internal default
rules"), with the seed's defaults. The seed does not let a scenario change them; here an
optional ``storyV1.policy`` object may, validated by :func:`parse_policy` (unknown fields and
values out of range are rejected, naming the field)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


class PolicyInvalid(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


@dataclass(frozen=True)
class WorldPolicy:
    developMax: int = 2  # noqa: N815 - the seed's names, verbatim
    maxBackgrounds: int = 3  # noqa: N815
    maxUndercurrents: int = 5  # noqa: N815
    minUndercurrents: int = 2  # noqa: N815 - a target, never met by inventing facts
    maxStageRounds: int = 6  # noqa: N815
    surfaceBudget: int = 2  # noqa: N815


@dataclass(frozen=True)
class NarrativePolicy:
    planMin: int = 5  # noqa: N815
    planMax: int = 7  # noqa: N815
    planMinSub: int = 1  # noqa: N815
    dealEveryTurns: int = 3  # noqa: N815
    promotionWaitEvents: int = 2  # noqa: N815
    branchConsecutiveEvents: int = 3  # noqa: N815
    subStarveEvents: int = 5  # noqa: N815
    mainStarveEvents: int = 3  # noqa: N815


RANGES: dict[str, tuple[int, int]] = {
    "developMax": (0, 6),
    "maxBackgrounds": (0, 6),
    "maxUndercurrents": (0, 10),
    "minUndercurrents": (0, 10),
    "maxStageRounds": (1, 20),
    "surfaceBudget": (0, 5),
    "planMin": (1, 12),
    "planMax": (1, 12),
    "planMinSub": (0, 12),
    "dealEveryTurns": (1, 12),
    "promotionWaitEvents": (0, 12),
    "branchConsecutiveEvents": (2, 12),
    "subStarveEvents": (1, 50),
    "mainStarveEvents": (1, 50),
}


def parse_policy(data: object) -> tuple[WorldPolicy, NarrativePolicy]:
    """``{"world": {...}, "narrative": {...}}`` (each optional) over the defaults."""
    if data is None:
        return WorldPolicy(), NarrativePolicy()
    if not isinstance(data, dict):
        raise PolicyInvalid("policy", "must be an object")
    unknown = set(data) - {"world", "narrative"}
    if unknown:
        raise PolicyInvalid(f"policy.{sorted(unknown)[0]}", "unknown field")
    world = _parse("world", data.get("world"), WorldPolicy())
    narrative = _parse("narrative", data.get("narrative"), NarrativePolicy())
    if world.minUndercurrents > world.maxUndercurrents:
        raise PolicyInvalid("policy.world.minUndercurrents", "must not exceed maxUndercurrents")
    if narrative.planMin > narrative.planMax:
        raise PolicyInvalid("policy.narrative.planMin", "must not exceed planMax")
    if narrative.planMinSub > narrative.planMin:
        raise PolicyInvalid("policy.narrative.planMinSub", "must not exceed planMin")
    return world, narrative


def _parse(name: str, data: object, default):
    if data is None:
        return default
    if not isinstance(data, dict):
        raise PolicyInvalid(f"policy.{name}", "must be an object")
    known = {f.name for f in fields(default)}
    changes = {}
    for key, value in data.items():
        where = f"policy.{name}.{key}"
        if key not in known:
            raise PolicyInvalid(where, "unknown field")
        if isinstance(value, bool) or not isinstance(value, int):
            raise PolicyInvalid(where, "must be an integer")
        low, high = RANGES[key]
        if not low <= value <= high:
            raise PolicyInvalid(where, f"must be within {low}..{high}")
        changes[key] = value
    return replace(default, **changes)
