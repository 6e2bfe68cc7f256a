"""Character routes beyond CRUD: card export (``GET .../characters/{id}/export``) and the
list without avatar bytes. Card import is its own view (:mod:`.card_import`): its body
limit is a file's, not a JSON resource's."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action

from console.image_answers import ImageAnswers, ImageRenderer
from console.renderers import FastJSONRenderer
from console.serializers import RejectUnknownFields
from roleplay.characters.card_export import export_character
from roleplay.characters.cards.build import EXPORT_FORMATS
from roleplay.characters.downloads import download
from roleplay.characters.selectors import without_avatars


class ExportQuerySerializer(RejectUnknownFields, serializers.Serializer):
    format = serializers.ChoiceField(choices=EXPORT_FORMATS, default="ccv3_png")

    def to_internal_value(self, data):
        return super().to_internal_value({key: data[key] for key in data})


FORMAT = OpenApiParameter(
    "format",
    str,
    enum=list(EXPORT_FORMATS),
    default="ccv3_png",
    description="ccv3_png: the avatar with chara (CCv2) and ccv3 text chunks, as SillyTavern "
    "writes it; ccv3_json / ccv2_json: the card as JSON. Bound worldbooks are embedded as "
    "character_book.",
)


class CardActions(ImageAnswers):
    """Mixin of ``CharacterViewSet``."""

    # Only ``export`` negotiates images; the CRUD routes answer JSON.
    renderer_classes = [FastJSONRenderer]

    def get_queryset(self):
        return without_avatars(super().get_queryset())

    @extend_schema(
        parameters=[FORMAT],
        responses={
            (200, "image/png"): OpenApiTypes.BINARY,
            (200, "application/json"): OpenApiTypes.OBJECT,
        },
    )
    @action(detail=True, methods=["get"], renderer_classes=[FastJSONRenderer, ImageRenderer])
    def export(self, request, pk=None):
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        character = self.get_object()  # its avatar, deferred in lists, loads on first use
        card = export_character(request.tenant, character, query.validated_data["format"])
        return download(card.data, card.content_type, card.filename)


class ConversationCardReads:
    """Mixin of ``ConversationViewSet``: a conversation answers with its greeting's text,
    so its character comes in the same query (without the avatar bytes)."""

    def get_queryset(self):
        return super().get_queryset().select_related("character").defer("character__avatar")
