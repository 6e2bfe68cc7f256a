from django.urls import re_path

from .api import BackupDownloadView, BackupRestoreView, BackupsView

# ``restore`` ahead of ``{id}`` routes.
urlpatterns = [
    re_path(r"^backups/?$", BackupsView.as_view(), name="backups"),
    re_path(r"^backups/restore/?$", BackupRestoreView.as_view(), name="backup-restore"),
    re_path(
        r"^backups/(?P<backup_id>[^/.]+)/download/?$",
        BackupDownloadView.as_view(),
        name="backup-download",
    ),
]
