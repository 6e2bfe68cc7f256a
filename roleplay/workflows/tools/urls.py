"""Console URLs of the workflow tools, included at ``/console/workflow-tools/``."""

from django.urls import path

from roleplay.workflows.tools import views

urlpatterns = [
    path("", views.tool_list, name="workflow_tools"),
    path("http/new/", views.http_create, name="workflow_http_create"),
    path("http/<uuid:pk>/", views.http_edit, name="workflow_http_edit"),
    path("http/<uuid:pk>/delete/", views.http_delete, name="workflow_http_delete"),
    path("mcp/new/", views.mcp_create, name="workflow_mcp_create"),
    path("mcp/<uuid:pk>/", views.mcp_edit, name="workflow_mcp_edit"),
    path("mcp/<uuid:pk>/delete/", views.mcp_delete, name="workflow_mcp_delete"),
    path("mcp/<uuid:pk>/test/", views.mcp_test, name="workflow_mcp_test"),
]
