"""Backup and restore, the one way in for every door (REST, console page, management
commands, the nightly task)."""

from __future__ import annotations

import logging
from typing import IO

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.models import Tenant
from console.services import create_tenant

from . import storage
from .export import export_tenant
from .restore import Restored, restore_archive

log = logging.getLogger(__name__)


def create_backup(tenant: Tenant, *, keep: int | None = None) -> storage.StoredBackup:
    """Export ``tenant`` into its backup folder, then keep its newest ``keep``
    (``BACKUP_KEEP`` by default)."""
    backup_id = storage.new_id(timezone.now())
    partial = storage.temporary_path(tenant, backup_id)
    try:
        with partial.open("wb") as out:
            export_tenant(tenant, out)
        stored = storage.publish(tenant, backup_id, partial)
    finally:
        partial.unlink(missing_ok=True)
    storage.prune(tenant, settings.BACKUP_KEEP if keep is None else keep)
    return stored


def export_to(tenant: Tenant, out: IO[bytes]) -> None:
    """Write ``tenant``'s archive to ``out`` (not stored)."""
    export_tenant(tenant, out)


def restore_into(tenant: Tenant, source: bytes | IO[bytes]) -> Restored:
    """Restore an archive into ``tenant``, which must own nothing (``tenant_not_empty``)."""
    return restore_archive(source, tenant)


def restore_as_new_tenant(source: bytes | IO[bytes], name: str) -> Restored:
    """A new tenant named ``name`` holding the archive; a failure leaves no tenant either."""
    with transaction.atomic():
        tenant = create_tenant(name)
        return restore_archive(source, tenant)


def nightly_backups() -> dict[str, str]:
    """One backup of every tenant, each keeping its newest ``BACKUP_KEEP``; a tenant that
    fails is logged and the others still run."""
    done: dict[str, str] = {}
    for tenant in Tenant.objects.order_by("name"):
        try:
            done[str(tenant.pk)] = create_backup(tenant).id
        except Exception:
            log.exception("backup.nightly_failed", extra={"tenant": str(tenant.pk)})
    return done
