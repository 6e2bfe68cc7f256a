"""A turn's two writes in one statement each: its start, on the critical path between a
player's message and the request to the model, and its finish.

Through the ORM, starting a turn takes a dozen queries (duplicate check, savepoints, the
next message timestamp, two inserts, the conversation, its tenant, the history, the default
model config...) and more CPU than anything else on the path; with many players at once
they queue behind each other for the interpreter. Here one statement inserts the player's
message and the running turn and reads what generation needs: the character sheet, the
player's name, the model config that applies (by id and ``updated_at``; the row itself
comes from a per-process cache, refreshed through the ORM when it changed) and the history.

Every unusual case makes the statement fail or return nothing, and the caller then takes
the ORM path (``turns.begin_turn`` and ``load_context``), which stays the reference for the
rules: a repeated ``client_message_id`` (unique violation), a turn already running or
abandoned (unique violation), a timestamp taken concurrently (unique violation), a
conversation gone (no row). Finishing works the same way against ``turns.finish_turn``.

The start also reports whether the character has enabled worldbook bindings, so a turn
without any skips the worldbook hook's queries.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import datetime
from functools import lru_cache

import psycopg
from django.db import IntegrityError, connection
from django.utils import timezone

from console.models import Player
from memory.models import Message
from roleplay.models import Character, Conversation, ModelConfig, Turn, TurnStatus
from worldbook.models import PromptBinding

logger = logging.getLogger(__name__)

_SQL = """
WITH conv AS (
    SELECT c.character_id, c.player_id, c.model_config_id AS conv_config,
           ch.name, ch.description, ch.first_message, ch.example_dialogues,
           ch.model_config_id AS char_config, p.display_name
    FROM {conversation} c
    JOIN {character} ch ON ch.id = c.character_id
    JOIN {player} p ON p.id = c.player_id
    WHERE c.id = %(conversation)s AND c.tenant_id = %(tenant)s
),
cfg AS (
    SELECT mc.id, mc.updated_at FROM {config} mc
    WHERE mc.id = COALESCE(
        (SELECT conv_config FROM conv),
        (SELECT char_config FROM conv),
        (SELECT d.id FROM {config} d WHERE d.tenant_id = %(tenant)s AND d.is_default LIMIT 1)
    )
),
hist AS (
    SELECT m.role, m.content, m.ts FROM {message} m
    WHERE m.tenant_id = %(tenant)s AND m.session_id = %(session)s AND NOT m.archived
    ORDER BY m.ts DESC LIMIT %(history)s
),
msg AS (
    INSERT INTO {message}
        (tenant_id, id, session_id, role, content, kind, status, metadata, ts, archived,
         created_at)
    SELECT %(tenant)s, %(user_message)s, %(session)s, 'user', %(content)s, 'chat',
           'complete', %(metadata)s::jsonb,
           GREATEST(%(now_ms)s, COALESCE((SELECT MAX(x.ts) FROM {message} x
               WHERE x.tenant_id = %(tenant)s AND x.session_id = %(session)s), 0) + 1),
           false, %(now)s
    FROM conv
    RETURNING id
),
turn AS (
    INSERT INTO {turn}
        (tenant_id, id, conversation_id, client_message_id, user_message_id,
         assistant_message_id, status, usage, trace, started_at, lease_expires_at)
    SELECT %(tenant)s, %(turn)s, %(conversation)s, %(client_id)s, msg.id, %(assistant)s,
           'running', '{{}}'::jsonb, '{{}}'::jsonb, %(now)s, %(lease)s
    FROM msg
    RETURNING id
)
SELECT conv.*, (SELECT id FROM cfg), (SELECT updated_at FROM cfg),
       EXISTS (SELECT 1 FROM {binding} b WHERE b.tenant_id = %(tenant)s
               AND b.prompt_id = conv.character_id::text AND b.enabled),
       (SELECT COALESCE(json_agg(json_build_array(h.role, h.content) ORDER BY h.ts), '[]')
        FROM hist h)::text,
       (SELECT count(*) FROM turn)
FROM conv
"""


@lru_cache(maxsize=1)
def _start_statement() -> str:
    return _SQL.format(
        conversation=Conversation._meta.db_table,
        character=Character._meta.db_table,
        player=Player._meta.db_table,
        config=ModelConfig._meta.db_table,
        message=Message._meta.db_table,
        turn=Turn._meta.db_table,
        binding=PromptBinding._meta.db_table,
    )


# config id -> the row as last read; a changed ``updated_at`` reloads it.
_CONFIGS: dict[uuid.UUID, ModelConfig] = {}


def _config(config_id: uuid.UUID | None, updated_at: datetime | None) -> ModelConfig | None:
    if config_id is None:
        return None
    cached = _CONFIGS.get(config_id)
    if cached is None or cached.updated_at != updated_at:
        cached = _CONFIGS[config_id] = ModelConfig.objects.get(pk=config_id)
    return cached


def _saved(instance):
    """Mark an instance built from columns as a row that exists (so ``save()`` updates)."""
    instance._state.adding = False
    instance._state.db = "default"
    return instance


def start_turn(
    conversation: Conversation, client_message_id: str, content: str, *, history: int, lease
):
    """``(turn, conversation, config, history, user_name, facts)`` after storing the message
    and the running turn, or ``None`` when the ORM path must decide (see the module doc)."""
    tenant = conversation.tenant
    now = timezone.now()
    params = {
        "tenant": tenant.pk,
        "conversation": conversation.pk,
        "session": conversation.session_id,
        "history": history,
        "user_message": uuid.uuid4(),
        "content": content,
        "metadata": json.dumps({"client_message_id": client_message_id}),
        "now_ms": int(time.time() * 1000),
        "now": now,
        "turn": uuid.uuid4(),
        "client_id": client_message_id,
        "assistant": uuid.uuid4(),
        "lease": now + lease,
    }
    try:
        with connection.cursor() as cursor:
            cursor.execute(_start_statement(), params)
            row = cursor.fetchone()
    except IntegrityError as exc:
        _unless_expected(exc)
        return None
    if row is None or not row[-1]:
        return None
    (
        character_id,
        player_id,
        conv_config,
        name,
        description,
        first_message,
        example_dialogues,
        char_config,
        display_name,
        config_id,
        config_updated_at,
        has_bindings,
        history_json,
        _inserted,
    ) = row
    character = _saved(
        Character(
            id=character_id,
            tenant=tenant,
            name=name,
            description=description,
            first_message=first_message,
            example_dialogues=example_dialogues,
            model_config_id=char_config,
        )
    )
    player = _saved(Player(id=player_id, tenant=tenant, display_name=display_name))
    # The socket's conversation with this turn's character and player: hooks read it.
    conversation.character = character
    conversation.player = player
    conversation.model_config_id = conv_config
    turn = _saved(
        Turn(
            id=params["turn"],
            tenant=tenant,
            conversation_id=conversation.pk,
            client_message_id=client_message_id,
            user_message_id=params["user_message"],
            assistant_message_id=params["assistant"],
            status=TurnStatus.RUNNING,
            started_at=now,
            lease_expires_at=params["lease"],
        )
    )
    config = _config(config_id, config_updated_at)
    rows = [{"role": role, "content": text} for role, text in json.loads(history_json)]
    facts = {"worldbook_bindings": has_bindings}
    return turn, conversation, config, rows, display_name, facts


_FINISH_SQL = """
WITH msg AS (
    INSERT INTO {message}
        (tenant_id, id, session_id, role, content, kind, status, metadata, ts, archived,
         created_at)
    SELECT %(tenant)s, %(message)s, %(session)s, 'assistant', %(content)s, 'chat', %(status)s,
           %(metadata)s::jsonb,
           GREATEST(%(now_ms)s, COALESCE((SELECT MAX(x.ts) FROM {message} x
               WHERE x.tenant_id = %(tenant)s AND x.session_id = %(session)s), 0) + 1),
           false, %(now)s
    WHERE %(store)s
    RETURNING id
)
UPDATE {turn} SET status = %(turn_status)s, model_config_id = %(config)s,
    usage = %(usage)s::jsonb, error_code = %(error)s, trace = %(trace)s::jsonb,
    finished_at = %(now)s
WHERE id = %(turn)s
"""


@lru_cache(maxsize=1)
def _finish_statement() -> str:
    return _FINISH_SQL.format(message=Message._meta.db_table, turn=Turn._meta.db_table)


def finish_turn(
    turn: Turn,
    *,
    store: bool,
    message_status: str,
    content: str,
    status: str,
    usage,
    error_code,
    trace,
    config,
) -> bool:
    """Store the assistant message (when ``store``) and close the turn in one statement;
    ``False`` when the ORM path must do it (a timestamp taken concurrently)."""
    now = timezone.now()
    metadata = {"turn_id": str(turn.id), **({"error": error_code} if error_code else {})}
    params = {
        "tenant": turn.tenant_id,
        "message": turn.assistant_message_id,
        "session": str(turn.conversation_id),
        "content": content,
        "status": message_status,
        "metadata": json.dumps(metadata),
        "now_ms": int(time.time() * 1000),
        "now": now,
        "store": store,
        "turn_status": status,
        "config": config.pk if config is not None else None,
        "usage": json.dumps(usage or {}),
        "error": error_code,
        "trace": json.dumps(trace or {}),
        "turn": turn.pk,
    }
    try:
        with connection.cursor() as cursor:
            cursor.execute(_finish_statement(), params)
    except IntegrityError as exc:
        _unless_expected(exc)
        return False
    return True


def _unless_expected(exc: IntegrityError) -> None:
    """A unique violation is one of the cases the ORM path decides. Anything else (a NOT
    NULL column these statements do not know, say) is a bug here: the ORM path still does
    the work, but say so rather than get slower without a word."""
    if not isinstance(exc.__cause__, psycopg.errors.UniqueViolation):
        logger.warning("turn statement failed, the ORM path takes over: %s", exc)
