"""Worldbook data in Django's admin, read only.

Every write of a book goes through ``worldbook.services`` (revisions by compare-and-set,
bindings checked against existing revisions, drafts through ``worldbook.editor.services``);
an admin form writing rows with the ORM would be a door around those rules, so the admin
only shows what is stored. Edit books in the console or through the API.
"""

from django.contrib import admin

from console.read_only_admin import ReadOnlyAdmin
from worldbook.models import Book, BookDraft, BookIndex, BookRevision, FileImport, PromptBinding


@admin.register(Book)
class BookAdmin(ReadOnlyAdmin):
    list_display = ("name", "tenant", "head_revision", "updated_at")
    search_fields = ("name",)


@admin.register(BookRevision)
class BookRevisionAdmin(ReadOnlyAdmin):
    list_display = ("book", "revision", "entry_count", "content_hash", "created_at")


@admin.register(BookDraft)
class BookDraftAdmin(ReadOnlyAdmin):
    list_display = ("book", "user", "base_revision", "version", "updated_at")


@admin.register(FileImport)
class FileImportAdmin(ReadOnlyAdmin):
    list_display = ("filename", "format", "book", "sha256", "created_at")


@admin.register(PromptBinding)
class PromptBindingAdmin(ReadOnlyAdmin):
    list_display = ("prompt_id", "book", "revision", "position", "enabled")


@admin.register(BookIndex)
class BookIndexAdmin(ReadOnlyAdmin):
    list_display = (
        "book",
        "revision",
        "embedding_version",
        "status",
        "chunks_done",
        "chunks_total",
    )
    list_filter = ("status",)
