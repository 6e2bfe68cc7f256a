"""Stored backups: ``BACKUP_DIR/<tenant id>/<id>.zip``, written whole then renamed into
place (a half-written archive is never listed), the newest ``BACKUP_KEEP`` kept per tenant.

An id is ``<UTC time to the microsecond>-<8 hex>``, so ids sort by age; anything else
names no backup, so a path never comes from the caller."""

from __future__ import annotations

import datetime
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from .errors import BackupNotFound

STAMP = "%Y%m%dT%H%M%S%fZ"
BACKUP_ID = re.compile(r"^\d{8}T\d{12}Z-[0-9a-f]{8}$")


@dataclass(frozen=True)
class StoredBackup:
    id: str
    size: int
    created_at: datetime.datetime
    path: Path


def tenant_dir(tenant) -> Path:
    return Path(settings.BACKUP_DIR) / str(tenant.pk)


def new_id(now: datetime.datetime) -> str:
    return f"{now.strftime(STAMP)}-{secrets.token_hex(4)}"


def temporary_path(tenant, backup_id: str) -> Path:
    folder = tenant_dir(tenant)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f".{backup_id}.partial"


def publish(tenant, backup_id: str, partial: Path) -> StoredBackup:
    final = tenant_dir(tenant) / f"{backup_id}.zip"
    os.replace(partial, final)
    return _stored(final)


def list_backups(tenant) -> list[StoredBackup]:
    """The tenant's stored backups, newest first."""
    folder = tenant_dir(tenant)
    if not folder.is_dir():
        return []
    found = [_stored(p) for p in folder.glob("*.zip") if BACKUP_ID.match(p.stem)]
    return sorted(found, key=lambda b: b.id, reverse=True)


def get_backup(tenant, backup_id: str) -> StoredBackup:
    """The tenant's backup ``backup_id``; another tenant's, a missing or a malformed id is the
    same ``BackupNotFound``."""
    if not isinstance(backup_id, str) or not BACKUP_ID.match(backup_id):
        raise BackupNotFound(message="no such backup")
    path = tenant_dir(tenant) / f"{backup_id}.zip"
    if not path.is_file():
        raise BackupNotFound(message="no such backup")
    return _stored(path)


def prune(tenant, keep: int) -> list[str]:
    """Delete all but the newest ``keep`` backups of the tenant; the ids deleted."""
    gone = list_backups(tenant)[max(keep, 0) :]
    for backup in gone:
        backup.path.unlink(missing_ok=True)
    return [b.id for b in gone]


def _stored(path: Path) -> StoredBackup:
    stat = path.stat()
    stamp = datetime.datetime.strptime(path.stem.split("-")[0], STAMP)
    return StoredBackup(path.stem, stat.st_size, stamp.replace(tzinfo=datetime.UTC), path)
