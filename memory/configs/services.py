"""Writes of memory settings: a whole settings object replaced, or a character's removed.

The object is checked (``memory.engine.config.check_config``: unknown fields and values out
of range are a 422 naming the field) and stored as given; ``version`` counts the changes.
Lowering a cap never deletes anything: it applies to the next write."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F

from memory.engine.config import check_config
from memory.models import MemorySettings


def put_settings(tenant, data, *, character_id: str = "") -> MemorySettings:
    checked = check_config(data)
    with transaction.atomic():
        row, created = MemorySettings.objects.select_for_update().get_or_create(
            tenant=tenant, character_id=character_id, defaults={"data": checked}
        )
        if not created:
            MemorySettings.objects.filter(pk=row.pk).update(data=checked, version=F("version") + 1)
            row.refresh_from_db()
    return row


def delete_settings(tenant, *, character_id: str) -> bool:
    """Remove a character's settings (it follows the tenant's again); whether there were."""
    deleted, _ = MemorySettings.objects.filter(tenant=tenant, character_id=character_id).delete()
    return bool(deleted)
