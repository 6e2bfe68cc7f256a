"""``/api/v1/players/{id}/memory/handoffs/``: seed 004's handoffs between personas over REST,
written through ``memory.handoffs.services`` like every other door.

The personas are the tenant's characters and the conversation is the player's own (else
"not found"); ``memory_ids`` lists only the entries that may still be shared, checked again
on every read."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.owners import character_model, conversation_model
from console.scoping import LOOKUP_MISSES
from console.serializers import RejectUnknownFields, StrictCharField, TenantRelatedField, validated
from memory.engine.handoffs import MAX_ITEMS, MAX_SUMMARY_CHARS
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.handoffs import selectors as handoffs
from memory.handoffs import services as handoff_writes
from memory.models import MemoryHandoff

HANDOFF = r"memory/handoffs/(?P<handoff_id>[^/.]+)"
HANDOFF_PARAM = OpenApiParameter("handoff_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


class HandoffSerializer(serializers.ModelSerializer):
    from_character = serializers.CharField(source="from_character_id")
    to_character = serializers.CharField(source="to_character_id")
    conversation = serializers.CharField(source="session_id")
    memory_ids = serializers.SerializerMethodField()

    def get_memory_ids(self, handoff) -> list[str]:
        return [str(entry.pk) for entry in handoffs.shared_entries(handoff)]

    class Meta:
        model = MemoryHandoff
        fields = [
            "id",
            "from_character",
            "to_character",
            "conversation",
            "summary",
            "memory_ids",
            "status",
            "version",
            "created_at",
            "updated_at",
        ]


class HandoffListSerializer(serializers.Serializer):
    results = HandoffSerializer(many=True)


class HandoffQuery(serializers.Serializer):
    conversation = serializers.UUIDField(required=False)
    character = serializers.UUIDField(required=False)


def _character():
    return TenantRelatedField(character_model, pk_field=serializers.UUIDField())


def _conversation():
    return TenantRelatedField(conversation_model, pk_field=serializers.UUIDField())


class NewHandoff(RejectUnknownFields, serializers.Serializer):
    # The persona handing over is named by its id only (seed 004's ``fromPersonaId``): it
    # may be a character since retired. The receiver must be the tenant's character.
    from_character = StrictCharField(max_length=64)
    to_character = _character()
    conversation = _conversation()
    summary = StrictCharField(
        max_length=MAX_SUMMARY_CHARS,
        trim_whitespace=False,
        required=False,
        default="",
        allow_blank=True,
    )
    memory_ids = serializers.ListField(
        child=serializers.UUIDField(), required=False, default=list, max_length=MAX_ITEMS
    )


class Receiver(RejectUnknownFields, serializers.Serializer):
    """Who acts: the receiving persona, in the handoff's conversation."""

    character = _character()
    conversation = _conversation()


class CloseBody(Receiver):
    version = serializers.IntegerField(min_value=1, max_value=2**31 - 1)


class MemoryHandoffActions:
    """Actions of the player viewset on the player's handoffs."""

    def _handoff(self, request, player, handoff_id) -> MemoryHandoff:
        try:
            found = handoffs.player_handoff(request.tenant, player, handoff_id)
        except LOOKUP_MISSES:
            found = None
        if found is None:
            raise MemoryNotFound("handoff_not_found", "no such handoff")
        return found

    @staticmethod
    def _own_conversation(player, conversation) -> None:
        if conversation.player_id != player.pk:
            raise MemoryInvalid("conversation_not_players", "the conversation is another player's")

    @extend_schema(
        methods=["get"],
        parameters=[HandoffQuery],
        responses=HandoffListSerializer,
        operation_id="api_v1_players_memory_handoffs_list",
    )
    @extend_schema(
        methods=["post"],
        request=NewHandoff,
        responses={201: HandoffSerializer},
        operation_id="api_v1_players_memory_handoffs_create",
    )
    @action(detail=True, methods=["get", "post"], url_path="memory/handoffs")
    def memory_handoffs(self, request, pk=None):
        """GET: the player's handoffs (filters ``conversation`` and receiving ``character``),
        newest first. POST: a new handoff from one persona to another."""
        player = self.get_object()
        if request.method == "GET":
            query = validated(HandoffQuery, request, request.query_params)
            rows = handoffs.player_handoffs(
                request.tenant,
                player,
                session_id=str(query.get("conversation") or ""),
                to_character_id=str(query.get("character") or ""),
            )
            return Response({"results": HandoffSerializer(rows, many=True).data})
        body = validated(NewHandoff, request)
        self._own_conversation(player, body["conversation"])
        handoff = handoff_writes.create_handoff(
            request.tenant,
            player,
            from_character_id=body["from_character"],
            to_character_id=str(body["to_character"].pk),
            session_id=body["conversation"].session_id,
            summary=body["summary"],
            memory_ids=[str(i) for i in body["memory_ids"]],
        )
        return Response(HandoffSerializer(handoff).data, status=201)

    def _receiver_action(self, request, handoff_id, body_class, write):
        player = self.get_object()
        handoff = self._handoff(request, player, handoff_id)
        body = validated(body_class, request)
        self._own_conversation(player, body["conversation"])
        done = write(
            handoff,
            body,
            character_id=str(body["character"].pk),
            session_id=body["conversation"].session_id,
        )
        return Response(HandoffSerializer(done).data)

    @extend_schema(request=Receiver, responses=HandoffSerializer, parameters=[HANDOFF_PARAM])
    @action(detail=True, methods=["post"], url_path=f"{HANDOFF}/accept")
    def memory_handoff_accept(self, request, pk=None, handoff_id=None):
        """The receiving persona accepts the handoff (again: no change)."""
        return self._receiver_action(
            request,
            handoff_id,
            Receiver,
            lambda handoff, body, **who: handoff_writes.accept_handoff(
                request.tenant, handoff, **who
            ),
        )

    @extend_schema(request=CloseBody, responses=HandoffSerializer, parameters=[HANDOFF_PARAM])
    @action(detail=True, methods=["post"], url_path=f"{HANDOFF}/close")
    def memory_handoff_close(self, request, pk=None, handoff_id=None):
        """The receiving persona closes the handoff at its current ``version``."""
        return self._receiver_action(
            request,
            handoff_id,
            CloseBody,
            lambda handoff, body, **who: handoff_writes.close_handoff(
                request.tenant, handoff, body["version"], **who
            ),
        )
