"""``POST /api/v1/players/{id}/memory/clear``: forget a player's memory (seed 004's clear,
through the forgetting orchestrator ``memory.forget`` like every other door).

Entries with their evidence, handoffs, and the memory documents of the player's
conversations go; the transcript stays. The answer is each subsystem's result and the
counts per kind."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.owners import owners
from console.serializers import RejectUnknownFields, validated
from memory.forget import counts, forget


class ClearBody(RejectUnknownFields, serializers.Serializer):
    """No fields: the player in the path is the scope."""


class ClearResult(serializers.Serializer):
    results = serializers.ListField(child=serializers.DictField())
    counts = serializers.DictField(child=serializers.IntegerField())


class MemoryClearActions:
    """The player viewset's forgetting action."""

    @extend_schema(
        request=ClearBody, responses=ClearResult, operation_id="api_v1_players_memory_clear"
    )
    @action(detail=True, methods=["post"], url_path="memory/clear")
    def memory_clear(self, request, pk=None):
        """Forget the player's memory; returns what each subsystem removed."""
        player = self.get_object()
        validated(ClearBody, request)
        sessions = owners().player_sessions(request.tenant, player)
        results = forget(request.tenant, scope="player", player=player, player_sessions=sessions)
        return Response({"results": results, "counts": counts(results)})
