"""Tenant backups over REST (``docs/backup.md``), admin scope:

- ``POST /api/v1/backups``: export the caller's tenant now and store it (201, the backup);
- ``GET /api/v1/backups``: the stored backups (nightly and on demand), newest first;
- ``GET /api/v1/backups/{id}/download``: the archive (``application/zip``);
- ``POST /api/v1/backups/restore``: a multipart ``file`` restored into the caller's tenant,
  which must be empty (409 ``tenant_not_empty``); a bad archive is a coded 4xx and nothing
  is written.

Another tenant's backup, a missing or a malformed id are the same 404.
"""

from __future__ import annotations

from django.conf import settings
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.failures import TooLarge
from console.idempotency import run_idempotent
from console.models import Scope
from console.serializers import RejectUnknownFields, validated
from console.uploads import FileImportView

from . import services, storage

BACKUP_ID = OpenApiParameter(
    "backup_id", OpenApiTypes.STR, OpenApiParameter.PATH, description="a backup id"
)
ARCHIVE_UPLOAD = {
    "multipart/form-data": {
        "type": "object",
        "properties": {"file": {"type": "string", "format": "binary"}},
        "required": ["file"],
    }
}


class BackupCreateBody(RejectUnknownFields, serializers.Serializer):
    """No fields: the export is of the caller's whole tenant (an empty body or ``{}``)."""


class BackupSerializer(serializers.Serializer):
    id = serializers.CharField()
    size = serializers.IntegerField(help_text="bytes of the archive")
    created_at = serializers.DateTimeField()
    download = serializers.CharField(help_text="where to fetch the archive")


class BackupList(serializers.Serializer):
    results = BackupSerializer(many=True)
    keep = serializers.IntegerField(help_text="how many backups a tenant keeps (BACKUP_KEEP)")


class RestoreAnswer(serializers.Serializer):
    tenant = serializers.UUIDField()
    rows = serializers.IntegerField()
    files = serializers.IntegerField()
    unmapped_count = serializers.IntegerField(
        help_text="ids in text or JSON that named no restored row"
    )
    unmapped = serializers.ListField(child=serializers.CharField(), help_text="a sample of them")


def backup_body(backup: storage.StoredBackup) -> dict:
    return {
        "id": backup.id,
        "size": backup.size,
        "created_at": backup.created_at,
        "download": f"/api/v1/backups/{backup.id}/download",
    }


class AdminOnly:
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN,)


class BackupsView(AdminOnly, BodyLimit, APIView):
    """The caller's stored backups; a POST makes one now."""

    @extend_schema(responses=BackupList, operation_id="api_v1_backups_list")
    def get(self, request):
        backups = storage.list_backups(request.tenant)
        return Response(
            {"results": [backup_body(b) for b in backups], "keep": settings.BACKUP_KEEP}
        )

    @extend_schema(
        request=BackupCreateBody,
        responses={201: BackupSerializer},
        operation_id="api_v1_backups_create",
    )
    def post(self, request):
        """Export the tenant now; the answer is the stored backup (the oldest beyond
        ``BACKUP_KEEP`` are removed)."""
        validated(BackupCreateBody, request)

        def work():
            return backup_body(services.create_backup(request.tenant)), 201

        return run_idempotent(request, "backup-create", {}, lambda: _stored_json(work))


def _stored_json(work):
    body, status = work()
    body["created_at"] = body["created_at"].isoformat()
    return body, status


class BackupDownloadView(AdminOnly, BodyLimit, APIView):
    """One stored backup's archive."""

    @extend_schema(
        parameters=[BACKUP_ID],
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
        operation_id="api_v1_backups_download",
    )
    def get(self, request, backup_id):
        backup = storage.get_backup(request.tenant, backup_id)
        return FileResponse(
            backup.path.open("rb"),
            as_attachment=True,
            filename=f"backup-{backup.id}.zip",
            content_type="application/zip",
        )


class BackupRestoreView(AdminOnly, FileImportView):
    """Restore an archive into the caller's tenant, which must be empty."""

    max_file_bytes = settings.BACKUP_MAX_UPLOAD_BYTES
    operation = "backup-restore"

    @extend_schema(
        request=ARCHIVE_UPLOAD,
        responses={201: RestoreAnswer},
        operation_id="api_v1_backups_restore",
    )
    def post(self, request):
        _name, data = self.received(request)
        if len(data) > self.max_file_bytes:
            raise TooLarge(
                "archive_too_large",
                "the archive is over the upload limit",
                {"max_bytes": self.max_file_bytes},
            )

        def work():
            restored = services.restore_into(request.tenant, data)
            return {
                "tenant": str(restored.tenant.pk),
                "rows": restored.rows,
                "files": restored.files,
                "unmapped_count": restored.unmapped_count,
                "unmapped": restored.unmapped,
            }, 201

        return self.imported(request, data, {}, work)
