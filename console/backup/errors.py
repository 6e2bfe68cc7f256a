"""Backup and restore's coded errors (HTTP status decided once, in ``console.errors``)."""

from __future__ import annotations

from console import failures

from .engine.errors import ArchiveRefused, ArchiveTooLarge

__all__ = [
    "ArchiveRefused",
    "ArchiveTooLarge",
    "TenantNotEmpty",
    "BackupNotFound",
    "RestoreMismatch",
]


class TenantNotEmpty(failures.Conflict):
    """A restore goes only into a tenant that owns nothing yet (409 ``tenant_not_empty``);
    ``details.tables`` names a few tables that hold rows."""

    default_code = "tenant_not_empty"


class BackupNotFound(failures.NotFound):
    """No stored backup of that id in the caller's tenant (404)."""

    default_code = "not_found"


class RestoreMismatch(failures.Invalid):
    """The restored rows do not hash as the archive's manifest says (422
    ``restore_mismatch``): the archive was altered after its export, or a row could not
    travel as it was; nothing is kept."""

    default_code = "restore_mismatch"
