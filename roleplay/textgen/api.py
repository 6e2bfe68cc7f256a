"""Imported instruct templates over REST (``docs/llm.md``, "Text-completion servers"):

- ``/api/v1/instruct-templates/``: list, retrieve, delete, update (a new ``file`` and/or
  ``name``: the configs naming it follow), and create, which imports a
  SillyTavern instruct template file, context template file or master export, or a
  ``tokenizer_config.json`` (the model's own Jinja ``chat_template``: kind ``jinja``)
  (``file``, the file's JSON as is) under ``name`` (else the file's own). A file that cannot
  be used — a Jinja template that does not parse or raises on a probe chat included — is 422
  ``instruct_template_invalid`` naming the field; importing a name again replaces the
  template, and the model configs that name it render with the new one.
"""

from __future__ import annotations

from rest_framework import serializers

from console.models import Scope
from console.serializers import RejectUnknownFields
from console.viewsets import ServiceWrites

from . import services
from .models import InstructTemplate


class InstructTemplateSerializer(RejectUnknownFields, serializers.ModelSerializer):
    """An imported template: its ``kind``; the ``instruct`` and ``context`` parts of a
    SillyTavern file (each null when the file had none), in SillyTavern's field names as the
    engine keeps them; or ``jinja`` (``template``, ``bos_token``, ``eos_token``) of a
    tokenizer config."""

    name = serializers.CharField(max_length=100, required=False, allow_blank=True)
    file = serializers.JSONField(
        write_only=True,
        help_text="The SillyTavern file's JSON: an instruct template (input_sequence, "
        "output_sequence, system_sequence, *_suffix, stop_sequence, wrap, names_behavior...), "
        "a context template (story_string, chat_start...) or {instruct, context}; or a "
        "tokenizer_config.json (chat_template as a string or [{name, template}], bos_token, "
        "eos_token).",
    )
    kind = serializers.CharField(read_only=True)
    instruct = serializers.JSONField(read_only=True)
    context = serializers.JSONField(read_only=True)
    jinja = serializers.JSONField(read_only=True)

    class Meta:
        model = InstructTemplate
        fields = ["id", "name", "file", "kind", "instruct", "context", "jinja", "created_at",
                  "updated_at"]  # fmt: skip
        read_only_fields = ["id", "created_at", "updated_at"]
        validators: list = []  # the name's uniqueness is the import's (it replaces)


def _import(tenant, *, file, name: str = "") -> InstructTemplate:
    return services.import_template(tenant, file=file, name=name)


class InstructTemplateViewSet(ServiceWrites):
    """The tenant's imported instruct and context templates."""

    model = InstructTemplate
    serializer_class = InstructTemplateSerializer
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT,)
    ordering = ("name",)
    create_service = _import
    update_service = services.update_template
    delete_service = services.delete_template
