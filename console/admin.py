from django.contrib import admin

from console.models import (
    ApiToken,
    AuditEvent,
    IdempotencyRecord,
    Membership,
    Player,
    Tenant,
)


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ("name", "id", "created_at")
    search_fields = ("name",)


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "tenant", "role")
    list_filter = ("role", "tenant")


@admin.register(Player)
class PlayerAdmin(admin.ModelAdmin):
    list_display = ("external_id", "display_name", "tenant", "created_at")
    list_filter = ("tenant",)
    search_fields = ("external_id", "display_name")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "prefix",
        "tenant",
        "scopes",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("tenant",)
    # The hash is useless to a reader and tokens are created through the console/command.
    exclude = ("token_hash",)
    readonly_fields = ("prefix", "created_at", "last_used_at")

    def has_add_permission(self, request):
        return False


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(admin.ModelAdmin):
    list_display = ("scope", "key", "tenant", "status_code", "created_at")
    list_filter = ("scope",)


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the audit log is written by ``console.audit`` and never edited by hand."""

    list_display = ("created_at", "action", "username", "tenant", "client_address")
    list_filter = ("action", "tenant")
    search_fields = ("username", "client_address")
    date_hierarchy = "created_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
