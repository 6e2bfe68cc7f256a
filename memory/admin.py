"""Read only: writes go through the services (``console.read_only_admin``)."""

from django.contrib import admin

from console.read_only_admin import ReadOnlyAdmin
from memory.models import MemoryMetadata, Message


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ("session_id", "role", "kind", "status", "ts", "archived")
    list_filter = ("role", "status", "archived")
    search_fields = ("session_id",)


@admin.register(MemoryMetadata)
class MemoryMetadataAdmin(ReadOnlyAdmin):
    list_display = ("namespace", "key", "tenant", "updated_at")
