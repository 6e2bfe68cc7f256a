"""The 20-book limit over every lorebook scope together: a binding write that would make any
conversation's turn read more than 20 books is refused (422 ``too_many_books``).

Which scopes meet in a conversation is the host's knowledge (its character, scenario,
persona; the tenant's global books; its own chat books), so the worldbook capability calls
this check (``worldbook.services.register_limit_check``, registered in ``roleplay.apps``)
inside every binding write's transaction, after the new bindings are in: a refusal undoes
them. One statement over the conversations the write touches (all of them for global books),
grouped by what decides their books, so a tenant's many chats cost one count per distinct
(character, scenario, persona) and one per chat that has books of its own.

A book bound in two scopes counts once (the turn reads it once: ``worldbook.engine.scopes``);
disabled bindings do not count. Should data still exceed the limit (written before this
check, or by two writes at once), the turn keeps the first 20 in scope order and the trace
names the rest.
"""

from __future__ import annotations

from functools import cache

from django.db import connection

from roleplay.models import Character, Conversation, Persona, Scenario
from worldbook import errors
from worldbook.engine.scopes import MAX_BOOKS
from worldbook.models import PromptBinding

# Per scope: which conversations a write of its bindings touches (``%s``: the prompt id).
_TOUCHED = {
    "prompt": "c.character_id::text = %s",
    "global": "%s = ''",
    "scenario": "COALESCE(sc.id, sd.id)::text = %s",
    "chat": "c.id::text = %s",
    "persona": "COALESCE(c.persona_id, dp.id)::text = %s",
}


@cache
def _sql(scope: str) -> str:
    t = {m: m._meta.db_table for m in (Conversation, Character, Scenario, Persona)}
    pb = PromptBinding._meta.db_table
    return f"""
        WITH conv AS (
            SELECT DISTINCT c.character_id::text AS ch,
                COALESCE(sc.id, sd.id)::text AS scen,
                COALESCE(c.persona_id, dp.id)::text AS pers,
                CASE WHEN EXISTS (
                    SELECT 1 FROM {pb} x WHERE x.tenant_id = c.tenant_id AND x.scope = 'chat'
                      AND x.prompt_id = c.id::text AND x.enabled
                ) THEN c.id::text END AS chat
            FROM {t[Conversation]} c
            JOIN {t[Character]} ch ON ch.id = c.character_id
            LEFT JOIN {t[Scenario]} sc ON sc.id = c.scenario_id AND sc.tenant_id = c.tenant_id
            LEFT JOIN {t[Scenario]} sd ON sd.id = ch.default_scenario_id
                AND sd.tenant_id = c.tenant_id
            LEFT JOIN {t[Persona]} dp ON c.persona_id IS NULL AND dp.player_id = c.player_id
                AND dp.is_default
            WHERE c.tenant_id = %s AND {_TOUCHED[scope]}
        )
        SELECT conv.chat, (
            SELECT count(DISTINCT pb.book_id) FROM {pb} pb
            WHERE pb.tenant_id = %s AND pb.enabled AND (
                (pb.scope = 'prompt' AND pb.prompt_id = conv.ch)
                OR pb.scope = 'global'
                OR (pb.scope = 'scenario' AND pb.prompt_id = conv.scen)
                OR (pb.scope = 'persona' AND pb.prompt_id = conv.pers)
                OR (pb.scope = 'chat' AND pb.prompt_id = conv.chat)
            )
        ) AS n
        FROM conv ORDER BY n DESC LIMIT 1
    """


def check_turn_limit(tenant, scope: str, prompt_id: str) -> None:
    """422 ``too_many_books`` when a conversation this scope reaches would read more than
    :data:`MAX_BOOKS` books with the bindings as they now stand."""
    if scope not in _TOUCHED:
        return
    with connection.cursor() as cursor:
        cursor.execute(_sql(scope), [tenant.pk, prompt_id, tenant.pk])
        row = cursor.fetchone()
    if row is not None and row[1] > MAX_BOOKS:
        raise errors.Invalid(
            "too_many_books",
            f"a conversation would read {row[1]} books; every scope together may bind "
            f"at most {MAX_BOOKS}",
            {"limit": MAX_BOOKS, "books": row[1], "scope": scope},
        )
