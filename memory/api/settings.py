"""Memory settings over REST: the tenant's at ``/api/v1/memory/settings`` and a character's
override at ``/api/v1/characters/{id}/memory-settings`` (``memory.configs``).

GET answers the stored fields, the settings in force and the version; PUT replaces the
stored fields (unknown fields and values out of range are a 422 naming the field); a
character's DELETE makes it follow the tenant's settings again."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.models import Scope
from console.serializers import RejectUnknownFields, StrictCharField, validated
from memory.configs import selectors as configs
from memory.configs import services as config_writes
from memory.engine.config import BOOLEANS, CHOICES, FIELDS, RANGES, as_dict
from memory.engine.documents import MAX_SLOT_CHARS


def _field(name: str) -> serializers.Field:
    """The body field of one setting, its type and range from ``memory.engine.config``."""
    if name in BOOLEANS:
        return serializers.BooleanField(required=False)
    if name in RANGES:
        low, high = RANGES[name]
        return serializers.IntegerField(required=False, min_value=low, max_value=high)
    if name in CHOICES:  # the engine names the field of a value not among them (422)
        return StrictCharField(required=False, max_length=64, help_text=" | ".join(CHOICES[name]))
    if name == "document_slot":
        return StrictCharField(required=False, max_length=MAX_SLOT_CHARS)
    return serializers.DictField(required=False, allow_null=True)  # consolidation, embedder


class SettingsBody(RejectUnknownFields, serializers.Serializer):
    """The stored settings: any of the fields, each within its range (``memory.engine.config``
    checks them again, so every door holds the same rules)."""

    def get_fields(self):
        return {name: _field(name) for name in FIELDS}


class SettingsAnswer(serializers.Serializer):
    stored = serializers.DictField(help_text="the fields set here (the rest are inherited)")
    effective = serializers.DictField(help_text="the settings in force")
    version = serializers.IntegerField(help_text="0 when nothing is stored")


def _answer(tenant, character_id: str = "") -> dict:
    row = configs.stored(tenant, character_id)
    return {
        "stored": row.data if row else {},
        "effective": as_dict(configs.config_for(tenant, character_id)),
        "version": row.version if row else 0,
    }


class MemorySettingsView(BodyLimit, APIView):
    """The tenant's memory settings."""

    required_scope = Scope.ADMIN
    read_scopes = (Scope.CONTENT, Scope.ADMIN)

    @extend_schema(responses=SettingsAnswer, operation_id="api_v1_memory_settings_retrieve")
    def get(self, request):
        return Response(_answer(request.tenant))

    @extend_schema(
        request=SettingsBody,
        responses=SettingsAnswer,
        operation_id="api_v1_memory_settings_update",
    )
    def put(self, request):
        """Replace the tenant's stored memory settings (see ``memory.engine.config``)."""
        config_writes.put_settings(request.tenant, validated(SettingsBody, request))
        return Response(_answer(request.tenant))


class CharacterMemorySettingsActions:
    """The character viewset's memory settings action."""

    @extend_schema(methods=["get"], responses=SettingsAnswer)
    @extend_schema(methods=["put"], request=SettingsBody, responses=SettingsAnswer)
    @extend_schema(methods=["delete"], responses={204: None})
    @action(detail=True, methods=["get", "put", "delete"], url_path="memory-settings")
    def memory_settings(self, request, pk=None):
        """The character's memory settings, which override the tenant's (but not the
        per-player caps ``max_entries`` and ``max_handoffs``)."""
        character_id = str(self.get_object().pk)
        if request.method == "PUT":
            body = validated(SettingsBody, request)
            config_writes.put_settings(request.tenant, body, character_id=character_id)
        elif request.method == "DELETE":
            config_writes.delete_settings(request.tenant, character_id=character_id)
            return Response(status=204)
        return Response(_answer(request.tenant, character_id))
