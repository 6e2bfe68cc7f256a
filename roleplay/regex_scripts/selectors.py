"""Reads of regex scripts: which scripts a conversation's texts pass through, compiled, and
the macros they are filled with. Scripts were checked when saved; one that no longer
compiles (an engine change) is skipped here rather than failing a turn."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache

from console.rows import prepared
from roleplay.llm.gateway import resolve_config
from roleplay.models import Character

from .engine import CompiledScript, Outcome, RegexScriptError, apply_scripts, compile_script
from .models import RegexScript, ScriptScope


@dataclass(frozen=True)
class ActiveScripts:
    """A conversation's scripts in run order (global, preset, then the character's if it is
    allowed) and the macros (``char``, ``user``) they are filled with."""

    scripts: tuple[CompiledScript, ...] = ()
    macros: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.scripts)

    def apply(self, text: str, placement: int, **options) -> Outcome:
        return apply_scripts(self.scripts, text, placement=placement, macros=self.macros,
                             **options)  # fmt: skip


NONE = ActiveScripts()


def owned(tenant, *, scope: str, character=None, preset=None):
    """One owner's scripts in order (what the REST list and the console show)."""
    rows = RegexScript.objects.filter(tenant=tenant, scope=scope)
    if character is not None:
        rows = rows.filter(character=character)
    if preset is not None:
        rows = rows.filter(preset=preset)
    return rows.order_by("position", "created_at")


def may_apply(tenant_id, character_id) -> bool:
    """Whether any script could run on a conversation with this character: one indexed
    probe, so a tenant without scripts (the usual case) pays one small read per turn and
    nothing more. Any preset's scripts count (the preset is resolved only when needed).
    The turn asks it in its first statement (``turns.begin_and_load``)."""
    with prepared(f"SELECT {may_apply_sql('%s', '%s')}", [tenant_id, character_id]) as cursor:
        return bool(cursor.fetchone()[0])


@cache
def may_apply_sql(tenant: str, character: str) -> str:
    """:func:`may_apply` as an SQL expression over the SQL expressions ``tenant`` and
    ``character`` (placeholders or columns; each appears once, in that order)."""
    shared = ", ".join(f"'{scope}'" for scope in (ScriptScope.GLOBAL, ScriptScope.PRESET))
    return f"""EXISTS (
        SELECT 1 FROM {RegexScript._meta.db_table} s
        WHERE s.tenant_id = {tenant} AND (
            s.scope IN ({shared})
            OR (s.scope = '{ScriptScope.CHARACTER}' AND s.character_id = {character} AND EXISTS (
                SELECT 1 FROM {Character._meta.db_table} ch
                WHERE ch.id = s.character_id AND ch.allow_regex
            ))
        )
    )"""


def active_scripts(
    tenant, character: Character | None, preset_id: str | None, user_name: str = ""
) -> ActiveScripts:
    """The scripts that run on a conversation with ``character`` under the preset
    ``preset_id`` (None: the shipped default, which has none)."""
    rows = RegexScript.objects.filter(tenant=tenant, scope=ScriptScope.GLOBAL)
    if preset_id:
        rows = rows | RegexScript.objects.filter(
            tenant=tenant, scope=ScriptScope.PRESET, preset_id=preset_id
        )
    if character is not None and character.allow_regex:
        rows = rows | RegexScript.objects.filter(
            tenant=tenant, scope=ScriptScope.CHARACTER, character=character
        )
    order = {ScriptScope.GLOBAL: 0, ScriptScope.PRESET: 1, ScriptScope.CHARACTER: 2}
    found = sorted(rows, key=lambda r: (order[r.scope], r.position, r.created_at))
    macros = {"char": character.name if character is not None else "", "user": user_name}
    return ActiveScripts(tuple(_compiled(found)), macros)


def _compiled(rows: Iterable[RegexScript]) -> list[CompiledScript]:
    out = []
    for row in rows:
        compiled = _compile(row.pk, row.updated_at, row)
        if compiled is not None:
            out.append(compiled)
    return out


@lru_cache(maxsize=2048)
def _compile(pk, updated_at, row: RegexScript) -> CompiledScript | None:
    """A script compiled once per saved version: the key is its id and ``updated_at`` (the
    row itself hashes and compares by its id, so it adds nothing to the key)."""
    try:
        return compile_script(row.script)
    except RegexScriptError:
        return None


def for_conversation(conversation, user_name: str) -> ActiveScripts:
    """:func:`active_scripts` of a conversation: its character, the preset of the model
    config that applies (``gateway.resolve_config``, the one rule), its persona's name."""
    character = conversation.character
    config = resolve_config(conversation.tenant, conversation=conversation, character=character)
    preset_id = config.preset_id if config is not None else None
    return active_scripts(
        conversation.tenant, character, str(preset_id) if preset_id else None, user_name
    )
