"""Explicit serializers of the runtime API. Model configs never expose key values.

They check the fields of a body (types, lengths, ranges, ids of the caller's tenant) and
render rows; the rules across fields and rows are the services' (``roleplay.services``),
and so are the lists of writable fields, which the console forms take too.
"""

from __future__ import annotations

from django.db import models
from rest_framework import serializers

from console.models import Player
from console.scoping import scoped
from memory.models import Message
from memory.selectors import DEFAULT_HISTORY_LIMIT
from roleplay.cards import limits
from roleplay.models import (
    Character,
    Conversation,
    ModelConfig,
    Persona,
    Preset,
    Scenario,
    Turn,
)
from roleplay.selectors import api_key_status, greeting_for, has_avatar
from roleplay.services.characters import CHARACTER_FIELDS
from roleplay.services.conversations import CONVERSATION_FIELDS
from roleplay.services.model_configs import MODEL_CONFIG_FIELDS
from roleplay.services.players import PLAYER_FIELDS


class TenantRelatedField(serializers.PrimaryKeyRelatedField):
    """A foreign key that only resolves inside the caller's tenant."""

    def get_queryset(self):
        request = self.context["request"]
        return scoped(self.queryset_model, request.tenant)

    def __init__(self, model, **kwargs):
        self.queryset_model = model
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        # An id is a JSON string or integer. Anything else is refused before the lookup:
        # ``pk=1.5`` would otherwise be truncated by the database cast and match row 1.
        if isinstance(data, bool) or not isinstance(data, int | str):
            raise serializers.ValidationError("invalid id")
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError:
            raise
        except Exception as exc:  # malformed UUIDs and the like
            raise serializers.ValidationError("invalid id") from exc


def optional_reference(model) -> TenantRelatedField:
    """An optional reference by UUID to one of the caller's ``model`` rows (None when left
    out or null)."""
    return TenantRelatedField(
        model, pk_field=serializers.UUIDField(), required=False, allow_null=True, default=None
    )


def validated(serializer_class, request, data=None):
    """The validated data of ``data`` (the request's body by default), or the 400 that names
    every invalid field; the request is the serializer's context (tenant-scoped ids)."""
    body = serializer_class(
        data=request.data if data is None else data, context={"request": request}
    )
    body.is_valid(raise_exception=True)
    return body.validated_data


class RejectUnknownFields:
    """Rejects unknown fields instead of silently ignoring them (a typo is an error)."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError({"body": ["expected a JSON object"]})
        unknown = set(data) - set(self.fields)
        if unknown:
            raise serializers.ValidationError({k: ["unknown field"] for k in sorted(unknown)})
        return super().to_internal_value(data)


class NoBody(RejectUnknownFields, serializers.Serializer):
    """An empty JSON object (or no body at all)."""


class StrictCharField(serializers.CharField):
    """Text that is text: a JSON number is refused (DRF would store ``-140245`` as its
    digits), and ``max_length`` counts what was sent, before white space is trimmed."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length, length=len(data))
        return super().to_internal_value(data)


class StrictSerializer(RejectUnknownFields, serializers.ModelSerializer):
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: StrictCharField,
        models.TextField: StrictCharField,
    }


class Versioned(serializers.Serializer):
    """A ``version`` for compare-and-set: set by the server on create, required on update
    (the version the caller edited; a stale one is the service's 409)."""

    version = serializers.IntegerField(
        min_value=1,
        max_value=2**31 - 1,
        required=False,
        help_text="In an update: the version you edited (required). Set by the server.",
    )

    def validate(self, attrs):
        if self.instance is None and "version" in attrs:
            raise serializers.ValidationError({"version": ["set by the server on create"]})
        if self.instance is not None and "version" not in attrs:
            message = "required: the version you edited (compare-and-set)"
            raise serializers.ValidationError({"version": [message]})
        return super().validate(attrs)


class ModelConfigSerializer(StrictSerializer):
    """How to reach a model. ``api_key_env`` names an environment variable; keys never
    appear here (``api_key_configured`` says whether that variable is set). ``preset`` is the
    tenant's preset its prompts come from; null means the shipped default preset."""

    api_key_configured = serializers.SerializerMethodField()
    preset = TenantRelatedField(Preset, allow_null=True, required=False)

    class Meta:
        model = ModelConfig
        fields = [
            "id",
            *MODEL_CONFIG_FIELDS,
            "api_key_configured",
            "is_default",
            "is_demo",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "is_demo", "created_at", "updated_at"]

    def get_api_key_configured(self, obj) -> bool:
        return api_key_status(obj) == "set"


class ConfigTestSerializer(serializers.Serializer):
    """``POST /api/v1/model-configs/{id}/test``: one short streamed reply through the gateway
    to a turn-shaped prompt (recorded as a ``ModelCall``, purpose ``console_test``). A
    failure is an answer too: ``ok`` false with the gateway's code, and the models the
    server lists when it can; a success may carry ``warnings`` (an empty reply, an order of
    messages the server refused)."""

    ok = serializers.BooleanField()
    latency_ms = serializers.FloatField()
    text = serializers.CharField()
    model = serializers.CharField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    attempts = serializers.IntegerField()
    error_code = serializers.CharField(allow_null=True)
    error_message = serializers.CharField(allow_null=True)
    offered_models = serializers.ListField(child=serializers.CharField())
    warnings = serializers.ListField(child=serializers.CharField())


class AvatarLinks(serializers.Serializer):
    """``has_avatar`` and ``avatar_url`` (``/api/v1/<avatar_path>/{id}/avatar``) of a
    character or persona; the bytes are never in the JSON."""

    avatar_path = ""
    has_avatar = serializers.SerializerMethodField()
    avatar_url = serializers.SerializerMethodField()

    def get_has_avatar(self, obj) -> bool:
        return has_avatar(obj)

    def get_avatar_url(self, obj) -> str:
        return f"/api/v1/{self.avatar_path}/{obj.pk}/avatar"


def author_note_field() -> serializers.DictField:
    """A character's or conversation's author's note (``roleplay.prompting.notes``); the
    services check its fields for every door."""
    return serializers.DictField(
        required=False,
        allow_null=True,
        help_text="The author's note: {content (at most 20000 characters), position "
        "(in_chat | before_prompt | after_prompt, default in_chat), depth (0-1000, default 4: "
        "messages from the end of the history), frequency (every n-th player message, 0 "
        "never, default 1), role (system | user | assistant)}; {} or null for none. A "
        "conversation's note replaces its character's.",
    )


class CharacterSerializer(AvatarLinks, StrictSerializer):
    """A character card; ``model_config`` is its default model (same tenant only).

    The card's lists and ``extensions`` obey :mod:`roleplay.cards.limits` (the services check
    them again for every door); the avatar is read and written at ``avatar_url``.
    """

    model_config = TenantRelatedField(ModelConfig, allow_null=True, required=False)
    default_scenario = TenantRelatedField(Scenario, allow_null=True, required=False)
    alternate_greetings = serializers.ListField(
        child=StrictCharField(max_length=limits.MAX_GREETING_CHARS, allow_blank=True),
        max_length=limits.MAX_GREETINGS,
        required=False,
    )
    tags = serializers.ListField(
        child=StrictCharField(max_length=limits.MAX_TAG_CHARS),
        max_length=limits.MAX_TAGS,
        required=False,
    )
    extensions = serializers.DictField(
        required=False,
        help_text="A card's extensions, kept verbatim (at most "
        f"{limits.MAX_EXTENSIONS_BYTES} bytes as JSON, {limits.MAX_EXTENSIONS_DEPTH} levels).",
    )
    author_note = author_note_field()
    avatar_path = "characters"

    class Meta:
        model = Character
        fields = [
            "id",
            *CHARACTER_FIELDS,
            "has_avatar",
            "avatar_url",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "created_at", "updated_at"]

    def validate_extensions(self, value):
        problems = limits.extensions_problems(value)
        if problems:
            raise serializers.ValidationError(problems)
        return value


class PlayerSerializer(StrictSerializer):
    """An end user of chat, keyed by the integrator's own ``external_id``."""

    class Meta:
        model = Player
        fields = ["id", *PLAYER_FIELDS, "created_at"]
        read_only_fields = ["id", "created_at"]


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

    class Meta:
        model = Conversation
        fields = ["id", *CONVERSATION_FIELDS, "greeting", "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]

    def get_greeting(self, obj) -> str:
        return greeting_for(obj)


class MessageSerializer(serializers.ModelSerializer):
    timestamp = serializers.IntegerField(source="ts", read_only=True)

    class Meta:
        model = Message
        fields = [
            "id",
            "role",
            "content",
            "kind",
            "status",
            "metadata",
            "timestamp",
            "archived",
            "selected_alternative",
            "edited",
            "created_at",
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
