"""The chat turn's first read as one statement: the conversation with its tenant, character,
player and persona, and the model config that applies with its preset (not the preset's
prompts, which ``effective_preset`` reads only when that preset version is not loaded yet).

Through the ORM this was two queries whose building cost several times their running; every
turn and every preview pays it. The config rule is ``resolve_config``'s (the conversation's
config, else the character's, else the tenant's default; one of another tenant is none), and
tests/fastpaths/test_turn_reads.py pins this read to that function and to the ORM's read of the
conversation.
"""

from __future__ import annotations

from functools import cache

from django.db import connection

from console.models import Player, Tenant
from console.rows import Columns, build_all, select
from roleplay.models import Character, Conversation, ModelConfig, Persona, Preset

_PARTS = (
    Columns.of(Conversation, "c"),
    Columns.of(Tenant, "t"),
    Columns.of(Character, "ch", defer=("avatar", "extensions")),  # images, card extras
    Columns.of(Player, "p"),
    Columns.of(Persona, "pe", defer=("avatar",)),
    Columns.of(ModelConfig, "mc"),
    Columns.of(Preset, "pr", defer=("prompts",)),
)


@cache
def _sql() -> str:
    table = {
        m: m._meta.db_table
        for m in (Conversation, Tenant, Character, Player, Persona, ModelConfig, Preset)
    }
    chosen = "COALESCE(c.model_config_id, ch.model_config_id)"
    return f"""
        SELECT {select(*_PARTS)}
        FROM {table[Conversation]} c
        JOIN {table[Tenant]} t ON t.id = c.tenant_id
        JOIN {table[Character]} ch ON ch.id = c.character_id
        JOIN {table[Player]} p ON p.id = c.player_id
        LEFT JOIN {table[Persona]} pe ON pe.id = c.persona_id
        LEFT JOIN {table[ModelConfig]} mc ON mc.tenant_id = c.tenant_id
            AND CASE WHEN {chosen} IS NULL THEN mc.is_default ELSE mc.id = {chosen} END
        LEFT JOIN {table[Preset]} pr ON pr.id = mc.preset_id AND pr.tenant_id = mc.tenant_id
        WHERE c.id = %s
    """


def turn_conversation(conversation_id) -> tuple[Conversation, ModelConfig | None]:
    """(the conversation with its related rows cached, the model config that applies)."""
    with connection.cursor() as cursor:
        cursor.execute(_sql(), [conversation_id])
        row = cursor.fetchone()
    if row is None:
        raise Conversation.DoesNotExist(f"conversation {conversation_id} does not exist")
    conversation, tenant, character, player, persona, config, preset = build_all(row, *_PARTS)
    for name, value in (
        ("tenant", tenant),
        ("character", character),
        ("player", player),
        ("persona", persona),
    ):
        getattr(Conversation, name).field.set_cached_value(conversation, value)
    if config is not None:
        ModelConfig.preset.field.set_cached_value(config, preset)
    return conversation, config  # type: ignore[return-value]
