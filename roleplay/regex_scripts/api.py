"""Regex scripts over REST (``docs/regex.md``):

- ``/api/v1/regex-scripts/``: list (``?scope=global|character|preset``, ``?character=``,
  ``?preset=``), create, retrieve, update, partial update, delete. ``script`` is the script in
  SillyTavern's shape (``findRegex``, ``replaceString``, ``placement``...); one that cannot run
  is 422 ``regex_script_invalid`` / ``regex_script_unsupported`` naming the field;
- ``/api/v1/characters/{id}/regex-allow``: GET whether the character's scripts run, PUT
  ``{"allow": true|false}`` to allow or stop them (imported cards start with them off).
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.errors import not_found
from console.models import Scope
from console.scoping import LOOKUP_MISSES, scoped
from console.serializers import RejectUnknownFields, TenantRelatedField, validated
from console.viewsets import FilteredList, QueryFilters, ServiceWrites
from roleplay.models import Character, Preset

from . import services
from .models import RegexScript, ScriptScope


class RegexScriptSerializer(RejectUnknownFields, serializers.ModelSerializer):
    """A stored script: its owner (``scope`` and ``character`` or ``preset``), its place in
    its owner's order and the script itself (SillyTavern's fields, as the engine keeps them)."""

    scope = serializers.ChoiceField(choices=ScriptScope.choices)
    character = TenantRelatedField(Character, allow_null=True, required=False)
    preset = TenantRelatedField(Preset, allow_null=True, required=False)
    position = serializers.IntegerField(min_value=0, max_value=1_000_000, required=False)
    script = serializers.DictField(
        help_text="SillyTavern's script: id, scriptName, findRegex (/pattern/flags), "
        "replaceString, trimStrings, placement (1 user input, 2 AI output, 3 slash command, "
        "5 world info, 6 reasoning), disabled, markdownOnly, promptOnly, runOnEdit, "
        "substituteRegex (0, 1, 2), minDepth, maxDepth."
    )

    class Meta:
        model = RegexScript
        fields = ["id", "scope", "character", "preset", "position", "script", "created_at",
                  "updated_at"]  # fmt: skip
        read_only_fields = ["id", "created_at", "updated_at"]


class ListQuery(QueryFilters):
    scope = serializers.ChoiceField(choices=ScriptScope.choices, required=False)
    character = serializers.UUIDField(required=False)
    preset = serializers.UUIDField(required=False)


class RegexScriptViewSet(FilteredList, ServiceWrites):
    """Regex scripts of the tenant: global ones, a character's and a preset's."""

    model = RegexScript
    list_query = ListQuery
    serializer_class = RegexScriptSerializer
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT,)
    ordering = ("scope", "position", "created_at")
    create_service = services.create_script
    update_service = services.update_script
    delete_service = services.delete_script

    @extend_schema(parameters=[ListQuery])
    def list(self, request, *args, **kwargs):
        """The scripts, in run order within each owner; filter by owner."""
        return super().list(request, *args, **kwargs)


class AllowBody(RejectUnknownFields, serializers.Serializer):
    allow = serializers.BooleanField()


class AllowAnswer(serializers.Serializer):
    character = serializers.UUIDField()
    allow = serializers.BooleanField(help_text="whether the character's regex scripts run")
    scripts = serializers.IntegerField(help_text="how many scripts the character has")


CHARACTER_ID = OpenApiParameter("id", OpenApiTypes.UUID, OpenApiParameter.PATH)


class CharacterRegexAllowView(BodyLimit, APIView):
    """Whether a character's regex scripts run: off for an imported card until allowed."""

    model = Character
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT,)

    @extend_schema(
        parameters=[CHARACTER_ID],
        responses=AllowAnswer,
        operation_id="api_v1_characters_regex_allow_retrieve",
    )
    def get(self, request, pk):
        return Response(_allow_answer(request.tenant, _character(request, pk)))

    @extend_schema(
        parameters=[CHARACTER_ID],
        request=AllowBody,
        responses=AllowAnswer,
        operation_id="api_v1_characters_regex_allow_update",
    )
    def put(self, request, pk):
        """Allow (``true``) or stop (``false``) the character's regex scripts."""
        character = _character(request, pk)
        services.set_allowed(character, validated(AllowBody, request)["allow"])
        return Response(_allow_answer(request.tenant, character))


def _character(request, pk) -> Character:
    try:
        return scoped(Character, request.tenant).only("id", "allow_regex").get(pk=pk)
    except LOOKUP_MISSES as exc:
        raise not_found() from exc


def _allow_answer(tenant, character: Character) -> dict:
    count = RegexScript.objects.filter(tenant=tenant, character=character).count()
    return {"character": character.id, "allow": character.allow_regex, "scripts": count}
