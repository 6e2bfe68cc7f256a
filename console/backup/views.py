"""The console's Backups page (admins): a one-click "Download backup" of the tenant now, and
the stored copies (nightly and on demand) to download."""

from __future__ import annotations

from django.conf import settings
from django.http import FileResponse, Http404
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_POST

from console.access import console_view
from console.models import Role

from . import services, storage
from .errors import BackupNotFound


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def backup_list(request):
    backups = storage.list_backups(request.tenant)
    context = {"backups": backups, "keep": settings.BACKUP_KEEP}
    return render(request, "console/backups.html", context)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
@require_POST
def backup_now(request):
    """Export the tenant now and answer the archive (it is stored too, as a copy)."""
    stored = services.create_backup(request.tenant)
    return _archive(stored)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def backup_download(request, backup_id: str):
    try:
        stored = storage.get_backup(request.tenant, backup_id)
    except BackupNotFound as exc:
        raise Http404("no such backup") from exc
    return _archive(stored)


def _archive(stored: storage.StoredBackup) -> FileResponse:
    stamp = timezone.now().strftime("%Y%m%d")
    return FileResponse(
        stored.path.open("rb"),
        as_attachment=True,
        filename=f"backup-{stamp}-{stored.id}.zip",
        content_type="application/zip",
    )
