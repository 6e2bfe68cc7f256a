"""Compaction checkpoints: read, the compare-and-set save, invalidation (seed 002, Compact).

A save names the version it expects to be the newest (0: none yet): inside one transaction
the newest row is locked and compared, and version + 1 is inserted (the unique constraint
guards two first saves). A conflict is never forced through (``StaleCheckpoint``).
Invalidation marks one version by number, compared the same way. ``confirm`` reads back
after a write whose outcome is unknown (a timeout): the row must hold the same version,
chain and full content. ``prepare``/``prepared`` keep the next checkpoint made in the
background (one per conversation): it names the version it extends, and is offered only
while that version is still the newest.
"""

from __future__ import annotations

from functools import cache

from django.db import IntegrityError, connection, transaction

from console import failures
from console.rows import Columns, select
from roleplay.compact.engine.checkpoint import Checkpoint
from roleplay.errors import RoleplayError
from roleplay.models import CompactCheckpoint, CompactPreparation


class StaleCheckpoint(RoleplayError, failures.Conflict):
    default_code = "checkpoint_version_conflict"


# Read on every turn of a conversation with Compact on: one statement of its own, because
# building the queryset ``compact.selectors.versions_of(...).first()`` costs about a
# millisecond more than running it on the path to the first delta (tests/compact pin it to
# that queryset, the one "newest checkpoint" rule).
_COLUMNS = Columns.of(CompactCheckpoint, "k")


@cache
def _newest_sql() -> str:
    return (
        f"SELECT {select(_COLUMNS)} FROM {CompactCheckpoint._meta.db_table} k "
        "WHERE k.conversation_id = %s AND k.scenario_id = %s ORDER BY k.version DESC LIMIT 1"
    )


def newest(conversation_id, scenario_id) -> CompactCheckpoint | None:
    with connection.cursor() as cursor:
        cursor.execute(_newest_sql(), [conversation_id, scenario_id])
        row = cursor.fetchone()
    return _COLUMNS.build(row, 0) if row else None


def as_checkpoint(row, version: int | None = None) -> Checkpoint:
    """The checkpoint a stored version (or a preparation, as ``version``) holds."""
    return Checkpoint(
        version=row.version if version is None else version,
        summary=row.summary,
        first_id=str(row.first_message_id),
        last_id=str(row.last_message_id),
        covered_count=row.covered_count,
        fingerprint=row.fingerprint,
        config_fingerprint=row.config_fingerprint,
        format_version=row.format_version,
        chain=row.chain,
    )


def _newest_locked(key: dict) -> int:
    """The newest version number (0: none), its row locked until the transaction ends."""
    rows = CompactCheckpoint.objects.select_for_update().filter(**key).order_by("-version")
    return rows.values_list("version", flat=True).first() or 0


def content_of(checkpoint: Checkpoint) -> dict:
    """The stored fields of ``checkpoint`` that a version and a preparation share."""
    return {
        "chain": checkpoint.chain,
        "summary": checkpoint.summary,
        "first_message_id": checkpoint.first_id,
        "last_message_id": checkpoint.last_id,
        "covered_count": checkpoint.covered_count,
        "fingerprint": checkpoint.fingerprint,
        "config_fingerprint": checkpoint.config_fingerprint,
        "format_version": checkpoint.format_version,
    }


def save(
    tenant_id, conversation_id, scenario_id, checkpoint: Checkpoint, *, expected: int, audit: dict
) -> CompactCheckpoint:
    """Insert ``checkpoint`` as version ``expected + 1``."""
    key = {"conversation_id": conversation_id, "scenario_id": scenario_id}
    try:
        with transaction.atomic():
            top = _newest_locked(key)
            if top != expected:
                raise StaleCheckpoint(message=f"the newest checkpoint is {top}, not {expected}")
            return CompactCheckpoint.objects.create(
                tenant_id=tenant_id,
                version=expected + 1,
                audit=audit,
                **content_of(checkpoint),
                **key,
            )
    except IntegrityError:
        raise StaleCheckpoint(message="another checkpoint was saved meanwhile") from None


def confirm(conversation_id, scenario_id, checkpoint: Checkpoint, *, version: int) -> bool:
    """Whether version ``version`` holds exactly ``checkpoint`` (read-back after a timeout)."""
    row = CompactCheckpoint.objects.filter(
        conversation_id=conversation_id, scenario_id=scenario_id, version=version
    ).first()
    return row is not None and as_checkpoint(row) == checkpoint and row.chain == checkpoint.chain


def invalidate(conversation_id, scenario_id, version: int, reason: str) -> bool:
    """Mark version ``version`` invalid, if it is still the newest and active."""
    with transaction.atomic():
        top = (
            CompactCheckpoint.objects.select_for_update()
            .filter(conversation_id=conversation_id, scenario_id=scenario_id)
            .order_by("-version")
            .first()
        )
        if top is None or top.version != version or top.status != "active":
            return False
        top.status, top.reason = "invalidated", reason[:64]
        top.save(update_fields=["status", "reason"])
        return True


def prepare(
    tenant_id, conversation_id, scenario_id, checkpoint: Checkpoint, *, base: int, audit: dict
) -> bool:
    """Keep ``checkpoint`` (version ``base + 1``) as the conversation's prepared next one,
    unless version ``base`` is no longer the newest, or no longer active (then nothing is
    written: False)."""
    key = {"conversation_id": conversation_id, "scenario_id": scenario_id}
    with transaction.atomic():
        if _newest_locked(key) != base:
            return False
        active = CompactCheckpoint.objects.filter(**key, version=base, status="active")
        if base and not active.exists():
            return False  # invalidated meanwhile (the history changed): made over old text
        CompactPreparation.objects.update_or_create(
            conversation_id=conversation_id,
            defaults={
                "tenant_id": tenant_id,
                "scenario_id": scenario_id,
                "base_version": base,
                "audit": audit,
                **content_of(checkpoint),
            },
        )
        return True


def prepared(conversation_id, scenario_id, base: int) -> Checkpoint | None:
    """The prepared checkpoint that extends version ``base`` (0: none), if there is one."""
    row = CompactPreparation.objects.filter(
        conversation_id=conversation_id, scenario_id=scenario_id, base_version=base
    ).first()
    return None if row is None else as_checkpoint(row, base + 1)
