"""Read only: writes go through the services (``console.read_only_admin``)."""

from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount, SocialApp, SocialToken
from django.contrib import admin

from console.read_only_admin import ReadOnlyAdmin
from roleplay.models import Character, Conversation, ModelCall, ModelConfig, Turn


@admin.register(ModelConfig)
class ModelConfigAdmin(ReadOnlyAdmin):
    list_display = ("name", "tenant", "provider", "model", "is_default", "is_demo")
    list_filter = ("provider", "tenant")


@admin.register(ModelCall)
class ModelCallAdmin(ReadOnlyAdmin):
    list_display = (
        "purpose",
        "model",
        "outcome",
        "error_code",
        "total_tokens",
        "latency_ms",
        "created_at",
    )
    list_filter = ("outcome", "purpose")


@admin.register(Character)
class CharacterAdmin(ReadOnlyAdmin):
    list_display = ("name", "tenant", "updated_at")
    search_fields = ("name",)


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ("id", "character", "player", "status", "updated_at")
    list_filter = ("status",)


@admin.register(Turn)
class TurnAdmin(ReadOnlyAdmin):
    list_display = ("id", "conversation", "status", "error_code", "started_at", "finished_at")
    list_filter = ("status",)


# django-allauth's tables stay empty (sign-on, ``roleplay.accounts.oidc``): none is offered
# here, so no client secret is ever typed into the database.
for _model in (EmailAddress, SocialAccount, SocialApp, SocialToken):
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)
