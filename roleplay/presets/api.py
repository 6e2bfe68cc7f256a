"""Presets over the API: CRUD with compare-and-set, import (JSON or a file), export.

- ``/api/v1/presets/``: list, create (``Idempotency-Key``; without ``prompts`` a copy of the
  shipped default's), retrieve, update and partial update (``version`` in the body is the
  version edited: a stale one is 409 ``revision_conflict`` with ``current_revision``),
  delete (409 ``preset_in_use`` while model configs use it, unless ``?detach=true`` moves
  them to the shipped default preset);
- ``POST /api/v1/presets/import``: a SillyTavern chat-completion preset or our own file, as
  ``{"name", "description", "preset": {...}}`` or a multipart ``file``; the answer carries
  the import report; ``Idempotency-Key`` honoured;
- ``GET /api/v1/presets/{id}/export?format=native|sillytavern``: the file, as an
  attachment named after the preset (SillyTavern names an imported preset after its file).

``prompts`` is documented by the pydantic model that validates it
(:class:`roleplay.prompting.presets.Prompt`); the rules across prompts answer 422
``preset_invalid`` with every problem in ``details.errors``.
"""

from __future__ import annotations

import hashlib
import json

from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from pydantic import TypeAdapter
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.utils import encoders

from console.idempotency import IDEMPOTENCY_KEY, run_idempotent
from console.models import Scope
from console.parsers import BoundedJSONParser
from console.serializers import RejectUnknownFields, StrictCharField, StrictSerializer, Versioned
from console.viewsets import ServiceWrites
from roleplay.models import Preset
from roleplay.presets import services as presets
from roleplay.presets.selectors import EXPORT_FORMATS, export_preset
from roleplay.presets.services import MAX_DESCRIPTION_CHARS
from roleplay.prompting.preset_files import decode_json
from roleplay.prompting.presets import MAX_NAME_CHARS, MAX_PROMPTS, Prompt


def _inline(schema: dict) -> dict:
    """``schema`` with its ``$defs`` references replaced by the definitions: one
    self-contained field schema. ``discriminator`` goes (its mapping names the definitions),
    and so do object defaults (``injection``'s), which client generators refuse on a union
    of objects; the field's description says it."""
    defs = schema.pop("$defs", {})

    def resolve(node):
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/"):
                return resolve(dict(defs[ref.removeprefix("#/$defs/")]))
            return {
                k: resolve(v)
                for k, v in node.items()
                if k != "discriminator" and not (k == "default" and isinstance(v, dict))
            }
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(schema)


PROMPTS_SCHEMA = {
    **_inline(TypeAdapter(list[Prompt]).json_schema()),
    "maxItems": MAX_PROMPTS,
    "description": "The preset's prompts in order (see roleplay.prompting.presets); "
    'injection defaults to {"position": "relative"}.',
}


@extend_schema_field(PROMPTS_SCHEMA)
class PromptsField(serializers.JSONField):
    """A list of prompts; the preset rules (422 ``preset_invalid``) are the services'."""

    def to_internal_value(self, data):
        if not isinstance(data, list):
            raise serializers.ValidationError("expected a list of prompts")
        return super().to_internal_value(data)


class PresetSerializer(Versioned, StrictSerializer):
    """A preset: its prompts in order and the ``version`` compare-and-set works on."""

    prompts = PromptsField(required=False)

    class Meta:
        model = Preset
        fields = [
            "id", "name", "description", "prompts", "reasoning_in_prompt", "version",
            "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = ["id", "created_at", "updated_at"]
        extra_kwargs = {"description": {"max_length": MAX_DESCRIPTION_CHARS}}


class PresetImportSerializer(RejectUnknownFields, serializers.Serializer):
    """A preset file in a JSON body: ``preset`` is the file's object, SillyTavern's or ours."""

    name = StrictCharField(max_length=MAX_NAME_CHARS, required=False)
    description = StrictCharField(
        max_length=MAX_DESCRIPTION_CHARS, required=False, allow_blank=True
    )
    preset = serializers.DictField(help_text="The preset file's JSON object.")


class PresetUploadSerializer(RejectUnknownFields, serializers.Serializer):
    """A preset file as a multipart upload; without ``name``, the file's name names it."""

    file = serializers.FileField()
    name = StrictCharField(max_length=MAX_NAME_CHARS, required=False)
    description = StrictCharField(
        max_length=MAX_DESCRIPTION_CHARS, required=False, allow_blank=True
    )


class ImportReportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["native", "sillytavern"])
    order = serializers.CharField(required=False)
    mapped = serializers.ListField(child=serializers.DictField(), required=False)
    added = serializers.ListField(child=serializers.DictField(), required=False)
    changed = serializers.ListField(child=serializers.DictField(), required=False)
    dropped = serializers.ListField(child=serializers.DictField(), required=False)
    unplaced = serializers.ListField(child=serializers.CharField(), required=False)
    model_config_settings = serializers.ListField(child=serializers.DictField(), required=False)
    ignored_settings = serializers.ListField(child=serializers.CharField(), required=False)
    regex_scripts = serializers.DictField(
        required=False,
        help_text="The preset's regex scripts (extensions.regex_scripts): how many were "
        "imported and each refused one (index, script, code, message).",
    )


class PresetImportResultSerializer(serializers.Serializer):
    preset = PresetSerializer()
    report = ImportReportSerializer()
    replayed = serializers.BooleanField()


class DeleteQuerySerializer(RejectUnknownFields, serializers.Serializer):
    detach = serializers.BooleanField(
        default=False,
        help_text="Move the model configs that use the preset to the shipped default first.",
    )

    def to_internal_value(self, data):
        return super().to_internal_value({key: data[key] for key in data})


class PresetViewSet(ServiceWrites):
    """Presets: ordered prompts with markers and named prompts. Updates send the ``version``
    they edited; a stale one is a 409 ``revision_conflict`` (see the module docstring)."""

    model = Preset
    serializer_class = PresetSerializer
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT,)
    ordering = ("name", "created_at")
    create_service = presets.create_preset
    update_service = presets.update_preset

    @extend_schema(parameters=[DeleteQuerySerializer])
    def destroy(self, request, *args, **kwargs):
        """Delete; 409 ``preset_in_use`` while model configs use it, unless ``detach``."""
        preset = self.get_object()
        query = DeleteQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        presets.delete_preset(preset, detach=query.validated_data["detach"])
        return Response(status=204)

    @extend_schema(
        request={
            "application/json": PresetImportSerializer,
            "multipart/form-data": PresetUploadSerializer,
        },
        responses={201: PresetImportResultSerializer},
        parameters=[IDEMPOTENCY_KEY],
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        url_name="import",
        parser_classes=[BoundedJSONParser, MultiPartParser],
    )
    def import_file(self, request):
        """A new preset from a SillyTavern chat-completion preset or our own file, with the
        import report (what mapped, what was added, changed, dropped or not applied)."""
        if request.content_type.startswith("multipart/"):
            body = PresetUploadSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            upload = body.validated_data["file"]
            raw = upload.read(self.max_body_bytes + 1)
            data, filename = decode_json(raw), upload.name or ""
            fingerprint = {"file": hashlib.sha256(raw).hexdigest(), "filename": filename}
            payload = {
                **fingerprint,
                **{k: body.validated_data.get(k) for k in ("name", "description")},
            }
        else:
            body = PresetImportSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            data, filename, payload = body.validated_data["preset"], "", request.data
        fields = body.validated_data

        def work():
            preset, report = presets.import_preset(
                request.tenant,
                data,
                name=fields.get("name"),
                description=fields.get("description"),
                filename=filename,
            )
            result = {"preset": PresetSerializer(preset).data, "report": report, "replayed": False}
            return json.loads(json.dumps(result, cls=encoders.JSONEncoder)), 201

        return run_idempotent(request, "roleplay.preset_import", payload, work)

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=list(EXPORT_FORMATS))],
        responses={200: OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["get"])
    def export(self, request, pk=None):
        """The preset as a file: ``native`` (ours) or ``sillytavern`` (their chat-completion
        preset, which SillyTavern imports)."""
        preset = self.get_object()
        fmt = request.query_params.get("format", "native")
        if fmt not in EXPORT_FORMATS:
            raise serializers.ValidationError({"format": [f"one of {', '.join(EXPORT_FORMATS)}"]})
        data, _notes = export_preset(preset, fmt)
        response = Response(data)
        response["Content-Disposition"] = content_disposition_header(True, f"{preset.name}.json")
        return response
