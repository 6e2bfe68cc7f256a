"""``GET /api/v1/conversations/{id}/export?format=``: the conversation as a chat file
(``sillytavern``: SillyTavern's ``.jsonl``, the default; ``openai``: a JSON message array),
as an attachment (``roleplay.conversations.chat_export``). The import route reads both back.
``GET .../export-group``: a group conversation's SillyTavern group file."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.renderers import BaseRenderer

from console.renderers import FastJSONRenderer
from console.serializers import RejectUnknownFields
from roleplay.characters.downloads import download
from roleplay.conversations.chat_export import export_chat, export_group
from roleplay.conversations.chats.write import FORMATS, SILLYTAVERN


class ChatExportQuery(RejectUnknownFields, serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS, default=SILLYTAVERN)

    def to_internal_value(self, data):
        return super().to_internal_value({key: data[key] for key in data})


class ExportedMessageSerializer(serializers.Serializer):
    """One message of the ``openai`` format."""

    role = serializers.CharField(help_text="user or assistant")
    content = serializers.CharField(allow_blank=True)


class GroupFileSerializer(serializers.Serializer):
    """SillyTavern's group file (the fields it reads; it keeps more)."""

    id = serializers.CharField()
    name = serializers.CharField()
    members = serializers.ListField(child=serializers.CharField(), help_text="avatar files")
    disabled_members = serializers.ListField(child=serializers.CharField())
    activation_strategy = serializers.IntegerField(help_text="0 natural 1 list 2 manual 3 pooled")
    generation_mode = serializers.IntegerField(help_text="0 swap, 1 join the cards")
    allow_self_responses = serializers.BooleanField()
    auto_mode_delay = serializers.FloatField(help_text="seconds")
    chat_id = serializers.CharField()
    chats = serializers.ListField(child=serializers.CharField())


class JSONLinesRenderer(BaseRenderer):
    """Accepts ``application/jsonl`` requests; an error is still written as JSON."""

    media_type = "application/jsonl"
    format = "jsonl"
    charset = None
    render_style = "binary"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        return data if isinstance(data, bytes) else FastJSONRenderer().render(data)


FORMAT = OpenApiParameter(
    "format",
    str,
    enum=list(FORMATS),
    default=SILLYTAVERN,
    description="sillytavern: SillyTavern's .jsonl chat (swipes and times kept); openai: a "
    "JSON array of {role, content}.",
)


class ChatExportActions:
    """Mixin of ``ConversationViewSet``."""

    @extend_schema(
        parameters=[FORMAT],
        responses={
            (200, "application/jsonl"): OpenApiTypes.BINARY,
            (200, "application/json"): ExportedMessageSerializer(many=True),
        },
    )
    @action(
        detail=True,
        methods=["get"],
        renderer_classes=[FastJSONRenderer, JSONLinesRenderer],
        pagination_class=None,  # a file, not a page of a list
    )
    def export(self, request, pk=None):
        query = ChatExportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        conversation = self.get_object()
        chat = export_chat(request.tenant, conversation, query.validated_data["format"])
        return download(chat.data, chat.content_type, chat.filename)

    @extend_schema(responses={(200, "application/json"): GroupFileSerializer})
    @action(
        detail=True,
        methods=["get"],
        url_path="export-group",
        renderer_classes=[FastJSONRenderer],
        pagination_class=None,
    )
    def export_group(self, request, pk=None):
        """The conversation's group as SillyTavern's ``groups/<id>.json``, beside the chat
        ``export`` writes (its ``chat_id``); ``import-group`` reads the two back."""
        conversation = self.get_object()
        group = export_group(conversation)
        return download(group.data, group.content_type, group.filename)
