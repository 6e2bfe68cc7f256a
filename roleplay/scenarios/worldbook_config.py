"""A scenario's ``worldbook`` object (seed 002, the Harness's worldbook wiring): how its
turns select from the character's bound books. Pure: no Django.

``{"tenantId": "tavern", "strategy": "hybrid", "tokenBudget": 2400}``, the seed's names and
the Harness's defaults (``hybrid`` and 2,400 tokens, not the service's ``rules`` and 1,500).
Absent, a turn selects with those defaults.

``tenantId`` is the seed's namespace of the books. Here the namespace is the scenario's own
tenant, decided by who is signed in, so the field may be left out; when it is given it must
name that tenant (its id or name: ``roleplay.scenarios.services`` checks it on save), never
another one. ``characterStrategy`` (beyond the seed) orders the lorebook scopes of the
scenario's turns (docs/worldbook.md, "Lorebook scopes"). The service's other selection
parameters (``scan_depth``, ``max_entries``, ``constant_budget_ratio``…) keep their
defaults, as in the seed.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    model_serializer,
)

STRATEGY: Final = "hybrid"
TOKEN_BUDGET: Final = 2400
MAX_TOKEN_BUDGET = 32_000  # the service's ``token_budget`` range


class WorldbookConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    tenantId: (
        Annotated[  # noqa: N815 - the seed's name
            str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)
        ]
        | None
    ) = None
    strategy: Literal["rules", "hybrid"] = STRATEGY
    tokenBudget: int = Field(default=TOKEN_BUDGET, ge=0, le=MAX_TOKEN_BUDGET)  # noqa: N815
    # Beyond the seed: the order between lorebook scopes for this scenario's turns
    # (SillyTavern's ``world_info_character_strategy``; ``worldbook.engine.scopes``). None:
    # the tenant's setting.
    characterStrategy: Literal["evenly", "character_first", "global_first"] | None = None  # noqa: N815

    @model_serializer(mode="wrap")
    def _unset_order_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``characterStrategy`` is stored and answered only when set, so the objects saved
        before it existed keep their exact shape."""
        data = handler(self)
        if data.get("characterStrategy") is None:
            data.pop("characterStrategy", None)
        return data


DEFAULT = WorldbookConfig()
