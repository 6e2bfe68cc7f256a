"""``/api/v1/personas/``: a player's personas (``?player=<id>`` lists one player's), and
``/api/v1/personas/{id}/avatar``.

Flat, like conversations: a persona names its ``player`` in the body (a foreign player is
"not found"), it never moves to another one, and ``is_default`` switches the player's one
default (``roleplay.players.services.personas``). Play-scoped, like players.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers

from console.models import Player, Scope
from console.serializers import (
    StrictSerializer,
    TenantRelatedField,
)
from console.viewsets import ServiceWrites
from roleplay.characters.api.avatars import AvatarView
from roleplay.characters.api.serializers import AvatarLinks
from roleplay.characters.selectors import without_avatars
from roleplay.models import Persona
from roleplay.players.services import personas
from roleplay.players.services.personas import PERSONA_FIELDS
from roleplay.players.services.players import PLAYER_FIELDS


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


class PlayerSerializer(StrictSerializer):
    """An end user of chat, keyed by the integrator's own ``external_id``."""

    class Meta:
        model = Player
        fields = ["id", *PLAYER_FIELDS, "created_at"]
        read_only_fields = ["id", "created_at"]
