"""The chat turn's first read as one statement: the conversation with its tenant, character,
player and persona, the model config that applies with its preset (not the preset's
prompts, which ``effective_preset`` reads only when that preset version is not loaded yet),
the scenario it runs, our own DIO's prompt in force when that scenario has DIO internal
(``roleplay.dio.reads``), Agent V2's state in force under that scenario (what the Actor's
continuity block shows: ``services.agent_state.state_sql``, a head lookup that finds nothing
for a scenario without Agent V2, and a round trip fewer on the path to the first delta), and
the player's default persona when the conversation has not chosen one
(``players.selectors.default_persona_sql``, another round trip fewer), whether the
tenant's moderation judges replies (as ``moderation.selectors.policy`` has it), and whether
a regex script may apply (``regex_scripts.selectors.may_apply``: without one, the scripts
are never read).

Through the ORM this was two queries whose building cost several times their running; every
turn and every preview pays it. The config rule is ``resolve_config``'s (the conversation's
config, else the character's, else the tenant's default; one of another tenant is none), the
scenario rule ``scenario_for``'s, and tests/fastpaths/test_turn_reads.py pins this read to
those functions and to the ORM's read of the conversation (and tests/agentic the state to
``agent_state.read_state``).
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from console.models import Player, Tenant
from console.rows import Columns, build_all, json_value, prepared, select
from roleplay.agentic.engine import ledger
from roleplay.agentic.services import agent_state
from roleplay.dio import reads as dio_reads
from roleplay.models import (
    Character,
    Conversation,
    ModelConfig,
    ModerationPolicy,
    Persona,
    Preset,
    Scenario,
    Turn,
)
from roleplay.players.selectors import default_persona_sql
from roleplay.regex_scripts.selectors import may_apply_sql

_PARTS = (
    Columns.of(Conversation, "c"),
    Columns.of(Tenant, "t"),
    Columns.of(Character, "ch", defer=("avatar", "extensions")),  # images, card extras
    Columns.of(Player, "p"),
    Columns.of(Persona, "pe", defer=("avatar",)),
    Columns.of(ModelConfig, "mc"),
    Columns.of(Preset, "pr", defer=("prompts",)),
    Columns.of(Scenario, "sc"),  # the conversation's own scenario
    Columns.of(Scenario, "sd"),  # the character's default scenario
)


@cache
def _sql() -> str:
    table = {
        m: m._meta.db_table
        for m in (
            Conversation, Tenant, Character, Player, Persona, ModelConfig, Preset, Scenario, Turn
        )
    }  # fmt: skip
    chosen = "COALESCE(c.model_config_id, ch.model_config_id)"
    state = agent_state.state_sql(
        "c.tenant_id", "c.id", "COALESCE(sc.id, sd.id)", str(ledger.NEWEST)
    )
    dio = dio_reads.active_sql(
        "CASE WHEN sc.id IS NOT NULL THEN sc.dio ELSE sd.dio END",
        "c.tenant_id", "c.id", "p.external_id", "c.character_id::text",
    )  # fmt: skip
    return f"""
        SELECT {select(*_PARTS)}, an.anchors, dp.default_persona,
            EXISTS (SELECT 1 FROM {ModerationPolicy._meta.db_table} mo
                WHERE mo.tenant_id = c.tenant_id AND mo.enabled AND mo.check_reply),
            {may_apply_sql("c.tenant_id", "c.character_id")}, st.*, dv.*
        FROM {table[Conversation]} c
        JOIN {table[Tenant]} t ON t.id = c.tenant_id
        JOIN {table[Character]} ch ON ch.id = c.character_id
        JOIN {table[Player]} p ON p.id = c.player_id
        LEFT JOIN {table[Persona]} pe ON pe.id = c.persona_id
        LEFT JOIN {table[ModelConfig]} mc ON mc.tenant_id = c.tenant_id
            AND CASE WHEN {chosen} IS NULL THEN mc.is_default ELSE mc.id = {chosen} END
        LEFT JOIN {table[Preset]} pr ON pr.id = mc.preset_id AND pr.tenant_id = mc.tenant_id
        LEFT JOIN {table[Scenario]} sc ON sc.id = c.scenario_id AND sc.tenant_id = c.tenant_id
        LEFT JOIN {table[Scenario]} sd ON sd.id = ch.default_scenario_id
            AND sd.tenant_id = c.tenant_id
        LEFT JOIN LATERAL ({state}) st ON TRUE
        LEFT JOIN LATERAL ({dio}) dv ON TRUE
        LEFT JOIN LATERAL (
            SELECT tu.trace -> 'prompt' -> 'anchors' AS anchors FROM {table[Turn]} tu
            WHERE tu.conversation_id = c.id AND tu.trace -> 'prompt' IS NOT NULL
            ORDER BY tu.started_at DESC LIMIT 1
        ) an ON TRUE
        LEFT JOIN LATERAL (
            SELECT ARRAY[d.id::text, d.name, d.description] AS default_persona
            FROM ({default_persona_sql("c.player_id")}) d
            WHERE c.persona_id IS NULL LIMIT 1
        ) dp ON TRUE
        WHERE c.id = %s
    """


class TurnRead(NamedTuple):
    """What :func:`turn_conversation` read."""

    conversation: Conversation  # with its related rows cached
    config: ModelConfig | None  # the model config that applies
    scenario: Scenario | None  # its own, else its character's default, as ``scenario_for``
    # Agent V2's state in force under it with the newest ``ledger.NEWEST`` active entries,
    # as ``agent_state.read_state(..., active_ledger=ledger.NEWEST)``
    agent_state: agent_state.Snapshot
    dio: dio_reads.Prefetched  # our own DIO's prompt in force, as ``dio.selectors``
    # the prompt anchors of the conversation's newest turn that assembled a prompt, or None
    # (``prompting.anchoring``)
    anchors: dict | None
    # the player's default persona (id, name, description) when the conversation chose none
    # and the player has one, as ``players.selectors.persona_for`` reads it
    default_persona: tuple[str, str, str] | None
    # whether the tenant's moderation policy judges replies (``moderation.selectors``)
    checks_replies: bool
    # whether a regex script may run on the conversation (``regex_scripts.may_apply``)
    scripts_may_apply: bool


def turn_conversation(conversation_id) -> TurnRead:
    """The turn's first read, in one statement (see the module docstring)."""
    with prepared(_sql(), [conversation_id]) as cursor:
        row = cursor.fetchone()
    if row is None:
        raise Conversation.DoesNotExist(f"conversation {conversation_id} does not exist")
    columns = len(row) - agent_state.STATE_COLUMNS - dio_reads.COLUMNS - 4
    anchors, default_persona, checks_replies, scripts = row[columns : columns + 4]
    dio = dio_reads.prefetched_of(row[len(row) - dio_reads.COLUMNS :])
    conversation, tenant, character, player, persona, config, preset, own, default = build_all(
        row[:columns], *_PARTS
    )
    for name, value in (
        ("tenant", tenant),
        ("character", character),
        ("player", player),
        ("persona", persona),
    ):
        getattr(Conversation, name).field.set_cached_value(conversation, value)
    if config is not None:
        ModelConfig.preset.field.set_cached_value(config, preset)
    state = agent_state.snapshot_of(row[columns + 4 : len(row) - dio_reads.COLUMNS])
    anchors = json_value(anchors)
    return TurnRead(
        conversation,
        config,
        own or default,  # type: ignore[arg-type]
        state,
        dio,
        anchors if isinstance(anchors, dict) else None,
        tuple(default_persona) if default_persona else None,  # type: ignore[arg-type]
        bool(checks_replies),
        bool(scripts),
    )
