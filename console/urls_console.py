from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

from console import views
from console.backup import views as backup_views

urlpatterns = [
    path("", RedirectView.as_view(url="/console/", permanent=False)),
    path(
        "console/login/",
        auth_views.LoginView.as_view(template_name="console/login.html"),
        name="login",
    ),
    path("console/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("console/", views.dashboard, name="dashboard"),
    path("console/tokens/", views.token_list, name="tokens"),
    path("console/tokens/new/", views.token_create, name="token_create"),
    path("console/tokens/<int:pk>/revoke/", views.token_revoke, name="token_revoke"),
    path("console/audit/", views.audit_log, name="audit"),
    path("console/lockouts/", views.lockout_list, name="lockouts"),
    path("console/lockouts/unlock/", views.lockout_unlock, name="lockout_unlock"),
    path("console/backups/", backup_views.backup_list, name="backups_page"),
    path("console/backups/now/", backup_views.backup_now, name="backup_now"),
    path(
        "console/backups/<str:backup_id>/download/",
        backup_views.backup_download,
        name="backup_download",
    ),
]
