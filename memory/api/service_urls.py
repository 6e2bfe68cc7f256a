"""``/v1/memory/prepare`` and ``/v1/memory/commit`` (the prepare/commit memory service)."""

from django.urls import path

from memory.api.service import CommitView, PrepareView

urlpatterns = [
    path("memory/prepare", PrepareView.as_view(), name="memory-prepare"),
    path("memory/commit", CommitView.as_view(), name="memory-commit"),
]
