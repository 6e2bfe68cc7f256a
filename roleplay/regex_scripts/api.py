"""Regex scripts over REST (``docs/regex.md``):

- ``/api/v1/regex-scripts/``: list (``?scope=global|character|preset``, ``?character=``,
  ``?preset=``), create, retrieve, update, partial update, delete. ``script`` is the script in
  SillyTavern's shape (``findRegex``, ``replaceString``, ``placement``...); one that cannot run
  is 422 ``regex_script_invalid`` / ``regex_script_unsupported`` naming the field;
- ``/api/v1/regex-scripts/import``: a regex file — one script, or a list of them as bulk
  exports write — added after the owner's scripts (``scope`` and ``character`` or
  ``preset`` as for a create; ``file`` the file's JSON): ``imported`` (the new ids) and
  ``refused`` (index, name, code, message: a malformed pattern, the owner's limit);
  none that can run is 422 with the first one's code. ``Idempotency-Key`` replays;
- ``/api/v1/characters/{id}/regex-allow``: GET whether the character's scripts run, PUT
  ``{"allow": true|false}`` to allow or stop them (imported cards start with them off).
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.errors import not_found
from console.idempotency import IDEMPOTENCY_KEY, run_idempotent
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


@extend_schema_field(OpenApiTypes.UUID)
class _OwnerRef(TenantRelatedField):
    """A character or preset of the tenant by id, typed for the schema (no model here)."""


class ImportBody(RejectUnknownFields, serializers.Serializer):
    scope = serializers.ChoiceField(choices=ScriptScope.choices)
    character = _OwnerRef(Character, allow_null=True, required=False)
    preset = _OwnerRef(Preset, allow_null=True, required=False)
    file = serializers.JSONField(help_text="SillyTavern's script object, or a list of them")


class ImportAnswer(serializers.Serializer):
    imported = serializers.ListField(child=serializers.UUIDField(), help_text="the new ids")
    refused = serializers.ListField(
        child=serializers.DictField(), help_text="index, script, code, message, details"
    )
    replayed = serializers.BooleanField()


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

    @extend_schema(request=ImportBody, responses={201: ImportAnswer}, parameters=[IDEMPOTENCY_KEY])
    @action(detail=False, methods=["post"], url_path="import", url_name="import")
    def import_file(self, request):
        """Add the scripts of a regex file (one script or a list) to an owner."""
        body = validated(ImportBody, request)

        def work():
            result = services.import_file(
                request.tenant, body["file"], scope=body["scope"],
                character=body.get("character"), preset=body.get("preset"),
            )  # fmt: skip
            return {**result, "replayed": False}, 201

        return run_idempotent(request, "roleplay.regex_import", request.data, work)


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
