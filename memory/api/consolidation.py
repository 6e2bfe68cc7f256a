"""``POST /api/v1/players/{id}/memory/consolidate`` (seed 004's ``consolidate``: schedule a
background consolidation now) and ``GET …/memory/consolidations`` (the player's runs).

``consolidate`` answers 202 with the conversations a run was sent for; without
``conversation`` it takes the player's 20 most recently active conversations. Consolidation
switched off for every one of them is a 409 ``consolidation_disabled`` and nothing is sent.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.owners import conversation_model
from console.serializers import RejectUnknownFields, optional_reference, validated
from memory.errors import MemoryConflict, MemoryInvalid
from memory.models import ConsolidationRun
from memory.runtime import runtime

MAX_CONVERSATIONS = 20
MAX_RUNS = 50


class ConsolidateBody(RejectUnknownFields, serializers.Serializer):
    conversation = optional_reference(conversation_model)


class ConsolidateAnswer(serializers.Serializer):
    queued = serializers.ListField(child=serializers.UUIDField())


class RunSerializer(serializers.ModelSerializer):
    player = serializers.IntegerField(source="player_id")

    class Meta:
        model = ConsolidationRun
        fields = [
            "id", "player", "conversation_id", "status", "message_ids", "entry_ids", "added",
            "merged", "error_code", "detail", "model_call_ids", "created_at", "finished_at",
        ]  # fmt: skip


class RunListSerializer(serializers.Serializer):
    results = RunSerializer(many=True)


class MemoryConsolidationActions:
    """Actions of the player viewset: consolidate now, and the player's runs."""

    @extend_schema(request=ConsolidateBody, responses={202: ConsolidateAnswer})
    @action(detail=True, methods=["post"], url_path="memory/consolidate")
    def memory_consolidate(self, request, pk=None):
        """Send a consolidation run for the conversation (or the player's recent ones)
        whose messages wait. 202 with the conversations sent."""
        player = self.get_object()
        body = validated(ConsolidateBody, request)
        conversation = body["conversation"]
        if conversation is not None and conversation.player_id != player.pk:
            raise MemoryInvalid("conversation_not_players", "the conversation is another player's")
        chosen = (
            [conversation]
            if conversation is not None
            else list(
                conversation_model()
                .objects.filter(tenant=request.tenant, player=player)
                .select_related("tenant", "player")
                .order_by("-updated_at")[:MAX_CONVERSATIONS]
            )
        )
        if chosen and not any(
            runtime().consolidation_settings(request.tenant, str(c.character_id)) for c in chosen
        ):
            raise MemoryConflict(
                "consolidation_disabled",
                "background consolidation is off: turn it on in the memory settings",
            )
        queued = runtime().request_consolidation(request.tenant, player, chosen)
        return Response({"queued": queued}, status=202)

    @extend_schema(responses=RunListSerializer)
    @action(detail=True, methods=["get"], url_path="memory/consolidations")
    def memory_consolidations(self, request, pk=None):
        """The player's newest 50 consolidation runs."""
        player = self.get_object()
        rows = ConsolidationRun.objects.filter(tenant=request.tenant, player=player)
        rows = rows.order_by("-created_at")[:MAX_RUNS]
        return Response({"results": RunSerializer(rows, many=True).data})
