"""Memory's console pages: the tenant's entries, review queue, jobs, handoffs, recall
playground and settings under ``/console/memory/``, and a conversation's memory documents and
pre-turn pack under ``/console/conversations/<id>/``. Included at the site's root
(``console.urls``); the REST door is ``memory.api``."""

from django.urls import path

from memory.views import documents, entries, handoffs, jobs, queue, recall, settings

urlpatterns = [
    path(
        "console/conversations/<uuid:pk>/memory/",
        documents.memory_documents,
        name="memory_documents",
    ),
    path(
        "console/conversations/<uuid:pk>/memory-pack/",
        recall.conversation_memory_pack,
        name="conversation_memory_pack",
    ),
    path(
        "console/conversations/<uuid:pk>/memory/<str:slot>/",
        documents.memory_document,
        name="memory_document",
    ),
    path("console/memory/", entries.memory_entries, name="memory_entries"),
    path("console/memory/queue/", queue.memory_queue, name="memory_queue"),
    path("console/memory/jobs/", jobs.memory_jobs, name="memory_jobs"),
    path(
        "console/memory/jobs/<uuid:job_id>/",
        jobs.memory_job_action,
        name="memory_job_action",
    ),
    path("console/memory/recall/", recall.memory_recall, name="memory_recall"),
    path(
        "console/memory/queue/<uuid:entry_id>/",
        queue.memory_queue_action,
        name="memory_queue_action",
    ),
    path(
        "console/memory/entries/<uuid:entry_id>/",
        entries.memory_entry,
        name="memory_entry",
    ),
    path(
        "console/memory/entries/<uuid:entry_id>/delete/",
        entries.memory_entry_delete,
        name="memory_entry_delete",
    ),
    path(
        "console/memory/players/<int:pk>/next-turn/",
        entries.memory_next_turn,
        name="memory_next_turn",
    ),
    path("console/memory/handoffs/", handoffs.memory_handoffs, name="memory_handoffs"),
    path(
        "console/memory/handoffs/<uuid:handoff_id>/",
        handoffs.memory_handoff_action,
        name="memory_handoff_action",
    ),
    path("console/memory/settings/", settings.memory_settings, name="memory_settings"),
]
