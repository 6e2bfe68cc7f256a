"""The character's REST shape: the card's fields, its avatar's links and the author's note."""

from __future__ import annotations

from rest_framework import serializers

from console.serializers import (
    StrictCharField,
    StrictSerializer,
    TenantRelatedField,
)
from roleplay.characters.cards import limits
from roleplay.characters.selectors import has_avatar
from roleplay.characters.services.characters import CHARACTER_FIELDS
from roleplay.models import (
    Character,
    ModelConfig,
    Scenario,
)


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

    The card's lists and ``extensions`` obey :mod:`roleplay.characters.cards.limits` (the services
    check
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
