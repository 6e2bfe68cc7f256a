"""The memory settings of a tenant, or of one character (seeds 003 and 004), pure: their
fields, defaults and ranges, and how a character's settings override the tenant's.

A settings object is validated as a whole: unknown fields are refused, each field is named
in its error. The caps default to seed 004's numbers; a tenant may lower them or raise them
within the ranges below. ``max_entries`` and ``max_handoffs`` are per player, so only the
tenant's value counts for them (a player talks to many characters)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from console.embedding import openai_embedder
from memory.engine import consolidation
from memory.engine.documents import DEFAULT_SLOT, check_slot
from memory.errors import MemoryInvalid


@dataclass(frozen=True)
class MemoryConfig:
    enabled: bool = True  # learn, select and place memory at all
    learn_from_rules: bool = True  # the local rules of a chat turn (memory.engine.rules)
    max_entries: int = 200  # per player (seed 004)
    max_handoffs: int = 50  # per player (seed 004)
    max_selected: int = 5  # preference/agreement entries placed per turn (seed 004)
    max_selected_chars: int = 600  # their characters in all (seed 004)
    temporary_days: int = 1  # a rule-found temporary preference expires after (seed 004)
    # Seed 000's JSON memory tools: the Actor may read and replace the conversation's
    # document in this slot, and sees its current value in its prompt.
    document_tools: bool = False
    document_slot: str = DEFAULT_SLOT
    # When an ``update_memory`` call is stored: ``immediate`` (seed 000: at once) or
    # ``on_accept`` (held as a proposal until the player goes on from the reply; dropped if
    # the reply is regenerated, fails or is rolled back).
    document_commit: str = "immediate"
    # The memory table (seed 000, ``memory.engine.table``): the Actor reads the tables of
    # document slot ``table`` and a reply's ``<tableEdit>`` calls change them.
    memory_table: bool = False
    # Background consolidation (seed 004): ``memory.engine.consolidation.Settings`` fields;
    # null or a partial object (the rest default, off).
    consolidation: dict[str, Any] | None = None
    # Diaries (seed 000): an episode entry once a conversation reaches ``diary_first_round``
    # rounds, then every ``diary_every_rounds`` more; a pack carries at most
    # ``episode_recall_count`` of them (the seed's plan tiers: 1, 2, 3, 5).
    # Recall's embedder (tenant only): null for the local one, or an OpenAI-compatible
    # ``/v1/embeddings`` endpoint (``console.embedding.openai_embedder.check_settings``).
    embedder: dict[str, Any] | None = None
    # Beliefs (seed 003): generalisations built in the background from the player's facts
    # and episodes, each with its supporters (a model call per build: off by default).
    beliefs: bool = False
    diaries: bool = True
    diary_first_round: int = 20
    diary_every_rounds: int = 10
    episode_recall_count: int = 1


RANGES = {
    "max_entries": (10, 2000),
    "max_handoffs": (1, 500),
    "max_selected": (0, 20),
    "max_selected_chars": (0, 4000),
    "temporary_days": (1, 365),
    "diary_first_round": (2, 1000),
    "diary_every_rounds": (1, 1000),
    "episode_recall_count": (0, 5),
}
BOOLEANS = (
    "enabled", "learn_from_rules", "document_tools", "memory_table", "beliefs", "diaries"
)  # fmt: skip
CHOICES = {"document_commit": ("immediate", "on_accept")}
FIELDS = tuple(f.name for f in fields(MemoryConfig))
PER_PLAYER = ("max_entries", "max_handoffs", "embedder")  # only the tenant sets these


def _invalid(field: str, message: str) -> MemoryInvalid:
    return MemoryInvalid("validation_error", f"{field}: {message}", {"field": field})


def check_config(data: Any) -> dict[str, Any]:
    """``data`` as stored settings (only the fields it names); raises on the first bad one."""
    if not isinstance(data, dict):
        raise _invalid("config", "must be an object")
    for name in data:
        if name not in FIELDS:
            raise _invalid(str(name)[:100], "unknown field")
    out: dict[str, Any] = {}
    for name, value in data.items():
        if name in BOOLEANS:
            if not isinstance(value, bool):
                raise _invalid(name, "must be true or false")
        elif name in RANGES:
            low, high = RANGES[name]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise _invalid(name, f"must be an integer from {low} to {high}")
        elif name in CHOICES:
            if value not in CHOICES[name]:
                raise _invalid(name, "must be one of " + ", ".join(CHOICES[name]))
        elif name == "consolidation" and value is not None:
            value = consolidation.check_settings(value)
        elif name == "embedder" and value is not None:
            try:
                value = openai_embedder.check_settings(value)
            except ValueError as exc:
                field, _, why = str(exc).partition(": ")
                raise _invalid(f"embedder.{field}", why) from None
        elif name == "document_slot":
            try:
                check_slot(value)
            except MemoryInvalid as exc:
                raise _invalid(name, exc.message) from exc
        out[name] = value
    return out


def resolve(
    base: MemoryConfig, tenant_data: dict[str, Any] | None, character_data: dict[str, Any] | None
) -> MemoryConfig:
    """The settings in force: ``base`` (the deployment's defaults), then the tenant's, then
    the character's (but not for the per-player caps)."""
    merged = asdict(base)
    merged.update(tenant_data or {})
    merged.update(
        {name: value for name, value in (character_data or {}).items() if name not in PER_PLAYER}
    )
    return MemoryConfig(**{name: value for name, value in merged.items() if name in FIELDS})


def consolidating(config: MemoryConfig) -> bool:
    """Whether background consolidation runs under ``config``: memory on and its
    ``consolidation`` object enabled."""
    return config.enabled and consolidation.settings_of(config.consolidation).enabled


def as_dict(config: MemoryConfig) -> dict[str, Any]:
    return asdict(config)
