"""``/api/v1/personas/``: a player's personas (``?player=<id>`` lists one player's), and
``/api/v1/personas/{id}/avatar``.

Flat, like conversations: a persona names its ``player`` in the body (a foreign player is
"not found"), it never moves to another one, and ``is_default`` switches the player's one
default (``roleplay.services.personas``). Play-scoped, like players.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers

from console.models import Player, Scope
from roleplay.api.avatars import AvatarView
from roleplay.api.serializers import AvatarLinks, StrictSerializer, TenantRelatedField
from roleplay.api.views import ServiceWrites
from roleplay.models import Persona
from roleplay.selectors import without_avatars
from roleplay.services import personas
from roleplay.services.personas import PERSONA_FIELDS


class PersonaSerializer(AvatarLinks, StrictSerializer):
    """Who a player is in a conversation: ``{{user}}`` is ``name``, ``{{persona}}`` is
    ``description``. A player's first persona is its default unless ``is_default`` is false."""

    player = TenantRelatedField(Player)
    is_default = serializers.BooleanField(required=False)
    avatar_path = "personas"

    class Meta:
        model = Persona
        fields = [
            "id",
            *PERSONA_FIELDS,
            "is_default",
            "has_avatar",
            "avatar_url",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "created_at", "updated_at"]
        # The one default per player is the service's switch (under a lock), not a
        # validator that would ask every body for ``is_default``.
        validators: list = []


class PersonaQuerySerializer(serializers.Serializer):
    player = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)


PLAYER = OpenApiParameter("player", int, description="only this player's personas")


@extend_schema(parameters=[PLAYER])
class PersonaViewSet(ServiceWrites):
    model = Persona
    serializer_class = PersonaSerializer
    required_scope = Scope.PLAY
    create_service = personas.create_persona
    update_service = personas.update_persona
    delete_service = personas.delete_persona
    ordering = ("player_id", "-is_default", "name")

    def get_queryset(self):
        rows = without_avatars(super().get_queryset())
        if self.action == "list":
            query = PersonaQuerySerializer(data=self.request.query_params)
            query.is_valid(raise_exception=True)
            if "player" in query.validated_data:
                rows = rows.filter(player_id=query.validated_data["player"])
        return rows


class PersonaAvatarView(AvatarView):
    model = Persona
    required_scope = Scope.PLAY
