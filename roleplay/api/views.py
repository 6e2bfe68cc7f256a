"""Runtime API: characters, players, conversations (+ messages, ws-ticket), model configs.

Thin views: the serializer validates the body's fields, one service per concept writes
(:class:`ServiceWrites`), and the serializer renders the result. Rules across fields and
rows live in the services, which raise ``roleplay.errors``; the project's exception handler
turns those into HTTP.
"""

from __future__ import annotations

import dataclasses
import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.utils import encoders

from console.idempotency import IDEMPOTENCY_KEY, run_idempotent
from console.models import Player, Scope
from console.tickets import issue_ticket
from console.viewsets import TenantModelViewSet
from memory import selectors as message_reads
from memory import services as message_store
from roleplay.agentic.api.agent_state import AgentStateActions
from roleplay.agentic.api.planning import PlanningActions
from roleplay.api import serializers as s
from roleplay.api.cards import CardActions, ConversationCardReads
from roleplay.api.chat_export import ChatExportActions
from roleplay.api.memory_consolidation import MemoryConsolidationActions
from roleplay.api.memory_documents import MemoryDocumentActions
from roleplay.api.memory_entries import MemoryEntryActions
from roleplay.api.memory_forget import MemoryClearActions
from roleplay.api.memory_handoffs import MemoryHandoffActions
from roleplay.api.memory_jobs import MemoryJobActions
from roleplay.api.memory_recall import MemoryRecallActions
from roleplay.api.memory_settings import CharacterMemorySettingsActions
from roleplay.api.message_actions import MessageActions
from roleplay.api.story import StoryActions
from roleplay.compact.api import CheckpointActions
from roleplay.models import Character, Conversation, ModelConfig
from roleplay.services import characters, conversations, model_configs, players
from roleplay.services.config_check import run_config_test
from roleplay.worldbook_context import replayed_decisions

TURN_ID_PARAM = OpenApiParameter("turn_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


class ServiceWrites(TenantModelViewSet):
    """Creates, updates and deletes through the concept's services, never ``serializer.save()``
    or ``instance.delete()``: the services hold the rules every other door applies too."""

    create_service = update_service = delete_service = None

    @extend_schema(parameters=[IDEMPOTENCY_KEY])
    def create(self, request, *args, **kwargs):
        """A create honours ``Idempotency-Key``: a retried request makes no second row."""

        def work():
            response = super(ServiceWrites, self).create(request, *args, **kwargs)
            # Stored as the record's JSON, so ids and times become their JSON text now.
            body = json.loads(json.dumps(response.data, cls=encoders.JSONEncoder))
            return body, response.status_code

        scope = f"roleplay.{self.model._meta.model_name}"
        return run_idempotent(request, scope, request.data, work)

    def perform_create(self, serializer):
        serializer.instance = type(self).create_service(
            self.request.tenant, **serializer.validated_data
        )

    def perform_update(self, serializer):
        serializer.instance = type(self).update_service(
            serializer.instance, **serializer.validated_data
        )

    def perform_destroy(self, instance):
        type(self).delete_service(instance)


class ModelConfigViewSet(ServiceWrites):
    model = ModelConfig
    serializer_class = s.ModelConfigSerializer
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN, Scope.CONTENT)
    create_service = model_configs.create_model_config
    update_service = model_configs.update_model_config
    delete_service = model_configs.delete_model_config

    @extend_schema(request=s.NoBody, responses=s.ConfigTestSerializer)
    @action(detail=True, methods=["post"])
    def test(self, request, pk=None):
        config = self.get_object()
        s.validated(s.NoBody, request)
        result = run_config_test(request.tenant, config)
        return Response(s.ConfigTestSerializer(dataclasses.asdict(result)).data)


class CharacterViewSet(CardActions, CharacterMemorySettingsActions, ServiceWrites):
    model = Character
    serializer_class = s.CharacterSerializer
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT, Scope.PLAY)
    create_service = characters.create_character
    update_service = characters.update_character
    delete_service = characters.delete_character


class PlayerViewSet(
    MemoryEntryActions,
    MemoryJobActions,
    MemoryConsolidationActions,
    MemoryHandoffActions,
    MemoryClearActions,
    MemoryRecallActions,
    ServiceWrites,
):
    model = Player
    serializer_class = s.PlayerSerializer
    required_scope = Scope.PLAY
    create_service = players.create_player
    update_service = players.update_player
    delete_service = players.delete_player


class ConversationViewSet(
    MessageActions,
    MemoryDocumentActions,
    AgentStateActions,
    StoryActions,
    CheckpointActions,
    PlanningActions,
    ConversationCardReads,
    ChatExportActions,
    ServiceWrites,
):
    model = Conversation
    serializer_class = s.ConversationSerializer
    required_scope = Scope.PLAY
    create_service = conversations.start_conversation
    update_service = conversations.update_conversation
    delete_service = conversations.delete_conversation

    @extend_schema(parameters=[s.MessagesQuerySerializer], responses=s.MessageListSerializer)
    @action(detail=True, methods=["get"])
    def messages(self, request, pk=None):
        conversation = self.get_object()
        query = s.MessagesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        limit = query.validated_data["limit"]
        if query.validated_data["include_archived"]:
            rows = message_reads.get_full_history(request.tenant, conversation.session_id, limit)
        else:
            rows = message_reads.get_history(request.tenant, conversation.session_id, limit)
        return Response({"results": s.MessageSerializer(rows, many=True).data})

    @extend_schema(request=s.TrimSerializer, responses=s.ArchivedSerializer)
    @action(detail=True, methods=["post"], url_path="messages/archive")
    def archive(self, request, pk=None):
        conversation = self.get_object()
        body = s.TrimSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        count = message_store.trim_history(
            request.tenant, conversation.session_id, body.validated_data["keep_recent"]
        )
        return Response({"archived": count})

    @extend_schema(request=s.RollbackSerializer, responses=s.DeletedSerializer)
    @action(detail=True, methods=["post"], url_path="messages/rollback")
    def rollback(self, request, pk=None):
        conversation = self.get_object()
        body = s.RollbackSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        count = message_store.delete_messages_by_timestamps(
            request.tenant, conversation.session_id, body.validated_data["timestamps"]
        )
        return Response({"deleted": count})

    @extend_schema(responses=s.TurnListSerializer)
    @action(detail=True, methods=["get"])
    def turns(self, request, pk=None):
        conversation = self.get_object()
        rows = conversation.turns.order_by("-started_at")[:50]
        return Response({"results": s.TurnSerializer(rows, many=True).data})

    @extend_schema(
        parameters=[s.DecisionsQuerySerializer, TURN_ID_PARAM],
        responses=s.ReplayedDecisionsSerializer,
    )
    @action(
        detail=True,
        methods=["get"],
        url_path=r"turns/(?P<turn_id>[^/.]+)/worldbook-decisions",
    )
    def worldbook_decisions(self, request, pk=None, turn_id=None):
        """Every worldbook entry's decision in a turn's selection, selected again from the
        turn's trace (the trace keeps only the selected entries and near misses)."""
        conversation = self.get_object()
        query = s.DecisionsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        detail = query.validated_data["detail"]
        return Response(replayed_decisions(conversation, turn_id, detail))

    @extend_schema(request=None, responses={201: s.WsTicketSerializer})
    @action(detail=True, methods=["post"], url_path="ws-ticket")
    def ws_ticket(self, request, pk=None):
        conversation = self.get_object()
        ticket, ttl = issue_ticket(conversation)
        return Response(
            {
                "ticket": ticket,
                "expires_in": ttl,
                "url": f"/ws/conversations/{conversation.id}/?ticket={ticket}",
            },
            status=201,
        )
