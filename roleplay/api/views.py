"""Runtime API: characters, players, conversations (+ messages, ws-ticket), model configs.

Thin views: the serializer validates the body's fields, one service per concept writes
(:class:`ServiceWrites`), and the serializer renders the result. Rules across fields and
rows live in the services, which raise ``roleplay.errors``; the project's exception handler
turns those into HTTP.
"""

from __future__ import annotations

import dataclasses

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from console.models import Player, Scope
from console.serializers import NoBody, validated
from console.tickets import issue_ticket
from console.viewsets import ServiceWrites
from memory import selectors as message_reads
from memory import services as message_store
from memory.api.consolidation import MemoryConsolidationActions
from memory.api.documents import MemoryDocumentActions
from memory.api.entries import MemoryEntryActions
from memory.api.forget import MemoryClearActions
from memory.api.handoffs import MemoryHandoffActions
from memory.api.jobs import MemoryJobActions
from memory.api.recall import MemoryRecallActions
from memory.api.settings import CharacterMemorySettingsActions
from roleplay.agentic.api.agent_state import AgentStateActions
from roleplay.agentic.api.planning import PlanningActions
from roleplay.branches.api import BranchActions
from roleplay.characters.api.cards import CardActions, ConversationCardReads
from roleplay.characters.api.serializers import CharacterSerializer
from roleplay.characters.services import characters
from roleplay.compact.api import CheckpointActions
from roleplay.conversations.api.chat_export import ChatExportActions
from roleplay.conversations.api.message_actions import MessageActions
from roleplay.conversations.api.serializers import (
    ArchivedSerializer,
    ConversationSerializer,
    DecisionsQuerySerializer,
    DeletedSerializer,
    MessageListSerializer,
    MessageSerializer,
    MessagesQuerySerializer,
    ReplayedDecisionsSerializer,
    RollbackSerializer,
    TrimSerializer,
    TurnListSerializer,
    TurnSerializer,
    WsTicketSerializer,
)
from roleplay.conversations.services import conversations
from roleplay.groups.api import GroupMemberActions
from roleplay.llm.configs import services as model_configs
from roleplay.llm.configs.api import ConfigTestSerializer, ModelConfigSerializer
from roleplay.llm.configs.check import run_config_test
from roleplay.llm.tokenizers.models import TOKENIZER_BODY_MAX_BYTES
from roleplay.models import Character, Conversation, ModelConfig
from roleplay.players.api import PlayerSerializer
from roleplay.players.selectors import persona_for
from roleplay.players.services import players
from roleplay.quotas.api import PlayerPlanActions
from roleplay.regex_scripts.selectors import for_conversation
from roleplay.regex_scripts.turns import display_texts
from roleplay.workflows.api import WorkflowRunActions
from roleplay.worldbook_plugin.context import replayed_decisions
from story.api import StoryActions

TURN_ID_PARAM = OpenApiParameter("turn_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


class ModelConfigViewSet(ServiceWrites):
    model = ModelConfig
    serializer_class = ModelConfigSerializer
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN, Scope.CONTENT)
    create_service = model_configs.create_model_config
    update_service = model_configs.update_model_config
    delete_service = model_configs.delete_model_config
    max_body_bytes = TOKENIZER_BODY_MAX_BYTES  # a tokenizer.json rides in the body

    @extend_schema(request=NoBody, responses=ConfigTestSerializer)
    @action(detail=True, methods=["post"])
    def test(self, request, pk=None):
        config = self.get_object()
        validated(NoBody, request)
        result = run_config_test(request.tenant, config)
        return Response(ConfigTestSerializer(dataclasses.asdict(result)).data)


class CharacterViewSet(CardActions, CharacterMemorySettingsActions, ServiceWrites):
    model = Character
    serializer_class = CharacterSerializer
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT, Scope.PLAY)
    create_service = characters.create_character
    update_service = characters.update_character
    delete_service = characters.delete_character


class PlayerViewSet(
    PlayerPlanActions,
    MemoryEntryActions,
    MemoryJobActions,
    MemoryConsolidationActions,
    MemoryHandoffActions,
    MemoryClearActions,
    MemoryRecallActions,
    ServiceWrites,
):
    model = Player
    serializer_class = PlayerSerializer
    required_scope = Scope.PLAY
    create_service = players.create_player
    update_service = players.update_player
    delete_service = players.delete_player


class ConversationViewSet(
    MessageActions,
    BranchActions,
    MemoryDocumentActions,
    AgentStateActions,
    StoryActions,
    CheckpointActions,
    PlanningActions,
    ConversationCardReads,
    ChatExportActions,
    WorkflowRunActions,
    GroupMemberActions,
    ServiceWrites,
):
    model = Conversation
    serializer_class = ConversationSerializer
    required_scope = Scope.PLAY
    create_service = conversations.start_conversation
    update_service = conversations.update_conversation
    delete_service = conversations.delete_conversation

    @extend_schema(parameters=[MessagesQuerySerializer], responses=MessageListSerializer)
    @action(detail=True, methods=["get"])
    def messages(self, request, pk=None):
        conversation = self.get_object()
        query = MessagesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        limit = query.validated_data["limit"]
        if query.validated_data["include_archived"]:
            rows = message_reads.get_full_history(request.tenant, conversation.session_id, limit)
        else:
            rows = message_reads.get_history(request.tenant, conversation.session_id, limit)
        # the display-only regex scripts' version of each message (``display``)
        scripts = for_conversation(conversation, persona_for(conversation).name)
        shown = {"display": display_texts(scripts, rows)}
        return Response({"results": MessageSerializer(rows, many=True, context=shown).data})

    @extend_schema(request=TrimSerializer, responses=ArchivedSerializer)
    @action(detail=True, methods=["post"], url_path="messages/archive")
    def archive(self, request, pk=None):
        conversation = self.get_object()
        body = TrimSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        count = message_store.trim_history(
            request.tenant, conversation.session_id, body.validated_data["keep_recent"]
        )
        return Response({"archived": count})

    @extend_schema(request=RollbackSerializer, responses=DeletedSerializer)
    @action(detail=True, methods=["post"], url_path="messages/rollback")
    def rollback(self, request, pk=None):
        conversation = self.get_object()
        body = RollbackSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        count = message_store.delete_messages_by_timestamps(
            request.tenant, conversation.session_id, body.validated_data["timestamps"]
        )
        return Response({"deleted": count})

    @extend_schema(responses=TurnListSerializer)
    @action(detail=True, methods=["get"])
    def turns(self, request, pk=None):
        conversation = self.get_object()
        rows = conversation.turns.order_by("-started_at")[:50]
        return Response({"results": TurnSerializer(rows, many=True).data})

    @extend_schema(
        parameters=[DecisionsQuerySerializer, TURN_ID_PARAM],
        responses=ReplayedDecisionsSerializer,
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
        query = DecisionsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        detail = query.validated_data["detail"]
        return Response(replayed_decisions(conversation, turn_id, detail))

    @extend_schema(request=None, responses={201: WsTicketSerializer})
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
