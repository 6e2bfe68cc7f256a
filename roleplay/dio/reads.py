"""Our own DIO's prompt in force, read inside the turn's first statement
(``roleplay.turns.reads``): a LATERAL subquery that runs only when the conversation's
scenario has DIO ``internal``, so a DIO turn pays no round trip of its own for it and a
turn without DIO pays nothing. The identity is :func:`roleplay.dio.identity.identity_for`'s
rule in SQL (the player's external id, the conversation, the character's id); the
selectors' :func:`~roleplay.dio.selectors.active_prompt` is the same read through the ORM,
and tests/dio pin the two to each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from roleplay.dio.engine.ports import ActivePrompt
from roleplay.dio.models import DioPromptVersion, VersionKind

COLUMNS = 7


@dataclass(frozen=True)
class Prefetched:
    """What the turn's read found: ``read`` False when the scenario's DIO is not internal
    (nothing was looked up), else ``active``, the prompt in force or None."""

    read: bool
    active: ActivePrompt | None = None


NOT_READ = Prefetched(False)


def active_sql(scenario_dio: str, tenant: str, conversation: str, user: str, target: str) -> str:
    """The newest version of the identity as ``COLUMNS`` columns (none when the scenario's
    ``dio`` JSON, the SQL expression ``scenario_dio``, is not internal)."""
    table = DioPromptVersion._meta.db_table
    return f"""
        SELECT TRUE AS dio_read, d.version AS dio_version, d.id AS dio_id, d.kind AS dio_kind,
            d.compiled_prompt AS dio_prompt, d.sha256 AS dio_sha,
            d.source_version_id AS dio_source
        FROM (SELECT 1) one
        LEFT JOIN LATERAL (
            SELECT v.version, v.id, v.kind, v.compiled_prompt, v.sha256, v.source_version_id
            FROM {table} v
            WHERE v.tenant_id = {tenant} AND v.conversation_id = {conversation}
                AND v.user_id = {user} AND v.target_prompt_id = {target}
            ORDER BY v.version DESC LIMIT 1
        ) d ON TRUE
        WHERE ({scenario_dio}) ->> 'mode' = 'internal'
    """


def active_of(
    version: int | None,
    pk: Any,
    kind: str | None,
    prompt: str,
    sha: str,
    source: Any,
    changeset: Sequence[Any] = (),
) -> ActivePrompt | None:
    """The one rule making an :class:`ActivePrompt` of a version's values, whether read by
    the turn's statement or as a row (``selectors.as_active``): none before the first
    version or once DIO is switched off."""
    if version is None or kind == VersionKind.OFF:
        return None
    return ActivePrompt(
        version=version,
        version_id=str(pk),
        compiled_prompt=prompt,
        sha256=sha,
        changeset=list(changeset),
        source_version_id=str(source) if source else None,
    )


def prefetched_of(values: Sequence[Any]) -> Prefetched:
    """The :class:`Prefetched` of the subquery's columns (all null: not read). The
    changeset is not read here: the turn does not need it."""
    read, version, pk, kind, prompt, sha, source = values
    if not read:
        return NOT_READ
    return Prefetched(True, active_of(version, pk, kind, prompt, sha, source))
