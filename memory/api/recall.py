"""``/api/v1/players/{id}/memory/recall`` and ``…/memory/fetch``: what a player's stored
conversations and memory entries hold, found by meaning and words (``memory.recall``).

The player is the path's; a ``conversation`` or ``character`` filter must be the tenant's
and a conversation the player's own (else 404), so a recall can never reach another
player's or tenant's text.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.owners import character_model, conversation_model
from console.serializers import RejectUnknownFields, TenantRelatedField, validated
from memory.errors import MemoryNotFound
from memory.recall import search


class RecallBody(RejectUnknownFields, serializers.Serializer):
    query = serializers.CharField(max_length=4000, trim_whitespace=True)
    k = serializers.IntegerField(min_value=1, max_value=search.MAX_K, default=10)
    conversation = TenantRelatedField(
        conversation_model, pk_field=serializers.UUIDField(), required=False, allow_null=True
    )
    character = TenantRelatedField(
        character_model, pk_field=serializers.UUIDField(), required=False, allow_null=True
    )
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=search.KINDS),  # RecallKindEnum
        required=False,
        allow_empty=False,
        max_length=len(search.KINDS),
    )
    since = serializers.DateTimeField(required=False, allow_null=True)


class FetchBody(RejectUnknownFields, serializers.Serializer):
    ids = serializers.ListField(
        child=serializers.UUIDField(), allow_empty=False, max_length=search.MAX_K
    )


class RecallItemSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=search.KINDS)
    id = serializers.CharField()
    text = serializers.CharField()
    score = serializers.FloatField()
    conversation_id = serializers.CharField(allow_null=True)
    message_ids = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()


class RecallSerializer(serializers.Serializer):
    items = RecallItemSerializer(many=True)
    degraded = serializers.BooleanField()


class FetchSerializer(serializers.Serializer):
    items = RecallItemSerializer(many=True)


class MemoryRecallActions:
    """Actions of the player viewset: recall and fetch."""

    @extend_schema(request=RecallBody, responses=RecallSerializer)
    @action(detail=True, methods=["post"], url_path="memory/recall")
    def memory_recall(self, request, pk=None):
        """The best ``k`` (at most 50) messages, each with its neighbours, and active memory
        entries for ``query``; ``degraded`` when a part of the search was not available."""
        player = self.get_object()
        body = validated(RecallBody, request)
        conversation = body.get("conversation")
        if conversation is not None and conversation.player_id != player.pk:
            raise MemoryNotFound("not_found", "no such conversation of this player")
        character = body.get("character")
        query = search.RecallQuery(
            query=body["query"],
            k=body["k"],
            conversation_id=str(conversation.pk) if conversation else None,
            character_id=str(character.pk) if character else None,
            kinds=tuple(body.get("kinds") or search.KINDS),
            since=body.get("since"),
        )
        return Response(search.recall(request.tenant, player, query))

    @extend_schema(request=FetchBody, responses=FetchSerializer)
    @action(detail=True, methods=["post"], url_path="memory/fetch")
    def memory_fetch(self, request, pk=None):
        """The player's indexed messages and active entries by id (the ids recall answers,
        in the order asked); unknown, foreign, expired or inactive ids are left out."""
        player = self.get_object()
        body = validated(FetchBody, request)
        ids = [str(i) for i in body["ids"]]
        return Response({"items": search.fetch(request.tenant, player, ids)})
