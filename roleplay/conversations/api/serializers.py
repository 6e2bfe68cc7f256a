"""The REST shapes of conversations, their messages and turns.

They check the fields of a body (types, lengths, ranges, ids of the caller's tenant) and
render rows; the rules across fields and rows are the services' (each concept's ``services``),
and so are the lists of writable fields, which the console forms take too.
"""

from __future__ import annotations

from rest_framework import serializers

from console.models import Player
from console.serializers import (
    RejectUnknownFields,
    StrictSerializer,
    TenantRelatedField,
)
from memory.models import Message
from memory.selectors import DEFAULT_HISTORY_LIMIT
from roleplay.characters.api.serializers import author_note_field
from roleplay.characters.cards import limits
from roleplay.characters.selectors import greeting_for
from roleplay.conversations.services.conversations import CONVERSATION_FIELDS
from roleplay.models import (
    Character,
    Conversation,
    ModelConfig,
    Persona,
    Scenario,
    Turn,
)


class ConversationSerializer(StrictSerializer):
    """A player's chat with a character; every related id must be of the caller's tenant.
    ``persona`` is one of the player's (null: the player's default); ``greeting_index``
    picks the opening (0: the first message, n: the n-th alternate greeting, checked against
    the character; null: none, as for an imported chat that does not start with one);
    ``greeting`` is its text."""

    player = TenantRelatedField(Player)
    character = TenantRelatedField(Character)
    model_config = TenantRelatedField(ModelConfig, allow_null=True, required=False)
    persona = TenantRelatedField(Persona, allow_null=True, required=False)
    scenario = TenantRelatedField(Scenario, allow_null=True, required=False)
    greeting_index = serializers.IntegerField(
        min_value=0, max_value=limits.MAX_GREETINGS, required=False, allow_null=True
    )
    greeting = serializers.SerializerMethodField()
    author_note = author_note_field()
    # A branch's parent and the message it was branched at (``roleplay.branches``).
    parent = serializers.UUIDField(source="parent_id", read_only=True, allow_null=True)
    fork_message_id = serializers.UUIDField(read_only=True, allow_null=True)

    class Meta:
        model = Conversation
        fields = [
            "id",
            *CONVERSATION_FIELDS,
            "greeting",
            "parent",
            "fork_message_id",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "parent", "fork_message_id", "created_at", "updated_at"]

    def get_greeting(self, obj) -> str:
        return greeting_for(obj)


class MessageSerializer(serializers.ModelSerializer):
    timestamp = serializers.IntegerField(source="ts", read_only=True)
    reasoning = serializers.CharField(
        read_only=True,
        help_text="A reasoning model's scratchpad before the reply (the selected "
        "alternative's); never part of content, nor of later prompts unless the preset's "
        "reasoning_in_prompt (docs/llm.md, Reasoning).",
    )
    display = serializers.SerializerMethodField(
        help_text="What the chat shows: the text after the display-only (markdownOnly) regex "
        "scripts; the stored content otherwise (docs/regex.md)."
    )

    def get_display(self, message) -> str:
        return self.context.get("display", {}).get(str(message.id), message.content)

    class Meta:
        model = Message
        fields = [
            "id",
            "role",
            "content",
            "reasoning",
            "kind",
            "status",
            "metadata",
            "timestamp",
            "archived",
            "selected_alternative",
            "edited",
            "created_at",
            "display",
        ]


class TurnSerializer(serializers.ModelSerializer):
    class Meta:
        model = Turn
        fields = [
            "id",
            "kind",
            "client_message_id",
            "user_message_id",
            "assistant_message_id",
            "speaker",
            "status",
            "error_code",
            "usage",
            "trace",
            "started_at",
            "finished_at",
        ]


class MessagesQuerySerializer(RejectUnknownFields, serializers.Serializer):
    """Query of ``GET .../messages/``: a flag that is not a boolean is refused, not read as
    false."""

    limit = serializers.IntegerField(min_value=1, max_value=1000, default=DEFAULT_HISTORY_LIMIT)
    include_archived = serializers.BooleanField(default=False)

    def to_internal_value(self, data):
        return super().to_internal_value({key: data[key] for key in data})


class TrimSerializer(RejectUnknownFields, serializers.Serializer):
    """Archive all but the latest ``keep_recent`` messages."""

    keep_recent = serializers.IntegerField(min_value=0, max_value=100_000)


# Message timestamps are milliseconds in a BIGINT column: bound them so a huge number is a 400.
MAX_TIMESTAMP = 2**63 - 1


class RollbackSerializer(RejectUnknownFields, serializers.Serializer):
    """Delete the messages stored at these timestamps (one whole turn, usually)."""

    timestamps = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=MAX_TIMESTAMP),
        min_length=1,
        max_length=10_000,
    )


# Response shapes of the conversation actions, so the OpenAPI schema matches what is sent
# (these lists are not paginated, and the counts are plain objects).
class MessageListSerializer(serializers.Serializer):
    results = MessageSerializer(many=True)


class TurnListSerializer(serializers.Serializer):
    results = TurnSerializer(many=True)


class DecisionsQuerySerializer(RejectUnknownFields, serializers.Serializer):
    """Query of ``GET .../turns/<turn_id>/worldbook-decisions``: which records to return."""

    detail = serializers.ChoiceField(choices=["all", "matched", "selected"], default="all")


class WorldbookDecisionSerializer(serializers.Serializer):
    book_id = serializers.CharField()
    revision = serializers.IntegerField()
    entry_id = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    selected = serializers.BooleanField()
    reason = serializers.CharField()
    details = serializers.DictField()


class ReplayedDecisionsSerializer(serializers.Serializer):
    turn_id = serializers.UUIDField()
    detail = serializers.CharField()
    reproduced = serializers.BooleanField()
    selection_fingerprint = serializers.CharField()
    snapshot = serializers.DictField()
    decisions = WorldbookDecisionSerializer(many=True)


class ArchivedSerializer(serializers.Serializer):
    archived = serializers.IntegerField()


class DeletedSerializer(serializers.Serializer):
    deleted = serializers.IntegerField()


class WsTicketSerializer(serializers.Serializer):
    ticket = serializers.CharField()
    expires_in = serializers.IntegerField()
    url = serializers.CharField()
