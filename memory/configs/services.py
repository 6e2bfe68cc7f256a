"""Writes of memory settings: a whole settings object replaced, or a character's removed.

The object is checked (``memory.engine.config.check_config``: unknown fields and values out
of range are a 422 naming the field) and stored as given; ``version`` counts the changes.
Lowering a cap never deletes anything: it applies to the next write. A change that switches
background consolidation on for characters whose conversations have a consolidation cursor
(memory or consolidation was off for them) sends ``consolidation_switched_on`` in its
transaction: consolidation starts from the messages sent after that moment (seed 004: what
is said while it is off is not kept for it)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F

from memory.configs.selectors import defaults
from memory.engine.config import check_config, consolidating, resolve
from memory.models import ConsolidationCursor, MemorySettings
from memory.signals import consolidation_switched_on


def put_settings(tenant, data, *, character_id: str = "") -> MemorySettings:
    checked = check_config(data)
    with transaction.atomic():
        row, created = MemorySettings.objects.select_for_update().get_or_create(
            tenant=tenant, character_id=character_id, defaults={"data": checked}
        )
        before = _consolidating(tenant, character_id, replaced=None if created else row.data)
        if not created:
            MemorySettings.objects.filter(pk=row.pk).update(data=checked, version=F("version") + 1)
            row.refresh_from_db()
        _switched(tenant, before, _consolidating(tenant, character_id))
    return row


def delete_settings(tenant, *, character_id: str) -> bool:
    """Remove a character's settings (it follows the tenant's again); whether there were."""
    with transaction.atomic():
        before = _consolidating(tenant, character_id)
        deleted, _ = MemorySettings.objects.filter(
            tenant=tenant, character_id=character_id
        ).delete()
        _switched(tenant, before, _consolidating(tenant, character_id))
    return bool(deleted)


_UNSET = object()


def _consolidating(tenant, character_id: str, replaced=_UNSET) -> dict[str, bool]:
    """Whether consolidation runs for each character the change touches: ``character_id``,
    or for the tenant's settings ("") every character with a cursor. ``replaced`` stands in
    for the stored data of ``character_id``'s row (None: no row)."""
    if character_id:
        characters = {character_id}
    else:
        characters = set(
            ConsolidationCursor.objects.filter(tenant=tenant)
            .values_list("character_id", flat=True)
            .distinct()
        )
    if not characters:
        return {}
    rows = dict(
        MemorySettings.objects.filter(
            tenant=tenant, character_id__in={"", *characters}
        ).values_list("character_id", "data")
    )
    if replaced is not _UNSET:
        rows.pop(character_id, None)
        if replaced is not None:
            rows[character_id] = replaced
    base = defaults()
    return {
        character: consolidating(resolve(base, rows.get(""), rows.get(character)))
        for character in characters
    }


def _switched(tenant, before: dict[str, bool], after: dict[str, bool]) -> None:
    started = sorted(c for c, on in after.items() if on and not before.get(c, False))
    if started:
        consolidation_switched_on.send(sender=None, tenant=tenant, character_ids=started)
