from django.contrib import admin

from worldbook.models import Book, BookIndex, BookRevision, FileImport, PromptBinding


@admin.register(Book)
class BookAdmin(admin.ModelAdmin):
    list_display = ("name", "tenant", "head_revision", "updated_at")
    search_fields = ("name",)


@admin.register(BookRevision)
class BookRevisionAdmin(admin.ModelAdmin):
    list_display = ("book", "revision", "entry_count", "content_hash", "created_at")
    # Revisions are immutable: publish a new one through the API or the console.
    readonly_fields = (
        "book",
        "revision",
        "content",
        "content_hash",
        "entry_count",
        "import_report",
    )


@admin.register(FileImport)
class FileImportAdmin(admin.ModelAdmin):
    list_display = ("filename", "format", "book", "sha256", "created_at")


@admin.register(PromptBinding)
class PromptBindingAdmin(admin.ModelAdmin):
    list_display = ("prompt_id", "book", "revision", "position", "enabled")


@admin.register(BookIndex)
class BookIndexAdmin(admin.ModelAdmin):
    list_display = (
        "book",
        "revision",
        "embedding_version",
        "status",
        "chunks_done",
        "chunks_total",
    )
    list_filter = ("status",)
