from django.contrib import admin

from memory.models import MemoryMetadata, Message


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ("session_id", "role", "kind", "status", "ts", "archived")
    list_filter = ("role", "status", "archived")
    search_fields = ("session_id",)


@admin.register(MemoryMetadata)
class MemoryMetadataAdmin(admin.ModelAdmin):
    list_display = ("namespace", "key", "tenant", "updated_at")
