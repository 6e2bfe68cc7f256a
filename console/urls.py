"""Root URLs: console, player chat, REST API (+ schema and docs), health, admin."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerView

from console import health
from console.schema import SchemaView

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/schema/", SchemaView.as_view(permission_classes=[]), name="schema"),
    path(
        "api/docs/",
        SpectacularSwaggerView.as_view(url_name="schema", permission_classes=[]),
        name="docs",
    ),
    path("api/v1/", include("images.api.urls")),
    path("api/v1/", include("console.backup.urls")),
    path("api/v1/", include("roleplay.api.urls")),
    path("v1/", include("worldbook.api.urls")),
    path("v1/", include("memory.api.service_urls")),
    path("v1/", include("roleplay.dio.api.protocol_urls")),
    path("console/worldbooks/", include("worldbook.urls")),
    path("console/images/", include("images.urls")),
    path("console/workflow-tools/", include("roleplay.workflows.tools.urls")),
    path("", include("roleplay.accounts.urls")),
    path("", include("roleplay.library.urls")),
    path("", include("roleplay.quotas.urls")),
    path("", include("roleplay.moderation.urls")),
    path("", include("console.urls_console")),
    path("", include("memory.urls")),
    path("", include("story.urls")),
    path("", include("roleplay.urls")),
]

handler400 = "console.errors.json_400"
handler404 = "console.errors.json_404"
