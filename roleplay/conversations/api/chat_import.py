"""``POST /api/v1/conversations/import``: a chat file from another tool (multipart ``file``)
becomes a new conversation of ``player`` with ``character``.

SillyTavern ``.jsonl`` chats, OpenAI message arrays, ShareGPT conversations, Agnai, RisuAI
and CAI Tools chat exports, text-generation-webui chat logs, and one row of a conversation
dataset (LMSYS-Chat, PIPPA, Capybara), at most 32 MiB
(``roleplay.conversations.chats.read``). Form fields: ``player`` and ``character`` (required),
``persona``, ``scenario`` and ``title`` (optional), each by the rules of creating a
conversation. The answer (``201``) is the conversation and the import report: the format,
counts of messages, alternatives and what was left out, and how the opening was taken.
A file refused (``invalid_chat_file`` 400; ``empty_chat``, ``too_many_messages``,
``message_too_long`` or ``several_conversations`` 422; ``file_too_large`` 413) writes
nothing. ``Idempotency-Key`` replays the first answer.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers

from console.idempotency import IDEMPOTENCY_KEY
from console.models import Player, Scope
from console.serializers import RejectUnknownFields, StrictCharField, TenantRelatedField, validated
from console.uploads import FileImportView
from roleplay.conversations.api.serializers import ConversationSerializer
from roleplay.conversations.chats.read import MAX_FILE_BYTES
from roleplay.conversations.services.chat_import import import_chat
from roleplay.models import Character, Persona, Scenario

CHAT_UPLOAD = {
    "multipart/form-data": {
        "type": "object",
        "properties": {
            "file": {"type": "string", "format": "binary"},
            "player": {"type": "integer"},
            "character": {"type": "string", "format": "uuid"},
            "persona": {"type": "string", "format": "uuid"},
            "scenario": {"type": "string", "format": "uuid"},
            "title": {"type": "string", "maxLength": 200},
        },
        "required": ["file", "player", "character"],
    }
}


class ChatImportFields(RejectUnknownFields, serializers.Serializer):
    file = serializers.FileField(required=False)  # read by uploaded_file
    player = TenantRelatedField(Player)
    character = TenantRelatedField(Character)
    persona = TenantRelatedField(Persona, required=False, allow_null=True)
    scenario = TenantRelatedField(Scenario, required=False, allow_null=True)
    title = StrictCharField(max_length=200, required=False, allow_blank=True)


class ChatImportSerializer(serializers.Serializer):
    conversation = ConversationSerializer()
    report = serializers.DictField()
    replayed = serializers.BooleanField()


class ConversationImportView(FileImportView):
    required_scope = Scope.PLAY
    max_file_bytes = MAX_FILE_BYTES
    operation = "roleplay.chat_import"

    @extend_schema(
        request=CHAT_UPLOAD,
        responses={201: ChatImportSerializer},
        parameters=[IDEMPOTENCY_KEY],
    )
    def post(self, request):
        fields = {key: request.data.get(key) for key in request.data if key != "file"}
        given = validated(ChatImportFields, request, fields)
        name, data = self.received(request)

        def work():
            result = import_chat(
                request.tenant,
                data,
                character=given["character"],
                **options(given, name),
            )
            return created(request, result)

        fingerprint = {key: str(value) for key, value in fields.items()}
        return self.imported(request, data, fingerprint, work)


def created(request, result) -> tuple[dict, int]:
    """An import's answer (a chat's or a group's): the new conversation and the report."""
    conversation = ConversationSerializer(result.conversation, context={"request": request})
    return {"conversation": conversation.data, "report": result.report, "replayed": False}, 201


def options(given: dict, file_name: str) -> dict:
    """The import's options from the form's validated fields (a chat's or a group's)."""
    return {
        "player": given["player"],
        "persona": given.get("persona"),
        "scenario": given.get("scenario"),
        "title": given.get("title") or "",
        "file_name": file_name,
    }
