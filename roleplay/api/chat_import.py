"""``POST /api/v1/conversations/import``: a chat file from another tool (multipart ``file``)
becomes a new conversation of ``player`` with ``character``.

SillyTavern ``.jsonl`` chats, OpenAI message arrays, ShareGPT conversations, Agnai, RisuAI
and CAI Tools chat exports, and one row of a conversation dataset (LMSYS-Chat, PIPPA,
Capybara), at most 32 MiB
(``roleplay.chats.read``). Form fields: ``player`` and ``character`` (required),
``persona``, ``scenario`` and ``title`` (optional), each by the rules of creating a
conversation. The answer (``201``) is the conversation and the import report: the format,
counts of messages, alternatives and what was left out, and how the opening was taken.
A file refused (``invalid_chat_file`` 400; ``empty_chat``, ``too_many_messages``,
``message_too_long`` or ``several_conversations`` 422; ``file_too_large`` 413) writes
nothing. ``Idempotency-Key`` replays the first answer.
"""

from __future__ import annotations

import hashlib
import json

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.utils import encoders
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.idempotency import IDEMPOTENCY_KEY, run_idempotent
from console.models import Player, Scope
from roleplay.api.avatars import FRAMING, uploaded_file
from roleplay.api.serializers import (
    ConversationSerializer,
    RejectUnknownFields,
    StrictCharField,
    TenantRelatedField,
    validated,
)
from roleplay.chats.read import MAX_FILE_BYTES
from roleplay.models import Character, Persona, Scenario
from roleplay.services.chat_import import import_chat

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


class ConversationImportView(BodyLimit, APIView):
    required_scope = Scope.PLAY
    parser_classes = [MultiPartParser]
    max_body_bytes = MAX_FILE_BYTES + FRAMING

    @extend_schema(
        request=CHAT_UPLOAD,
        responses={201: ChatImportSerializer},
        parameters=[IDEMPOTENCY_KEY],
    )
    def post(self, request):
        fields = {key: request.data.get(key) for key in request.data if key != "file"}
        given = validated(ChatImportFields, request, fields)
        name, data = uploaded_file(request, "file", MAX_FILE_BYTES)
        fingerprint = {
            "file": hashlib.sha256(data).hexdigest(),
            **{key: str(value) for key, value in fields.items()},
        }

        def work():
            result = import_chat(
                request.tenant,
                data,
                character=given["character"],
                player=given["player"],
                persona=given.get("persona"),
                scenario=given.get("scenario"),
                title=given.get("title") or "",
                file_name=name,
            )
            body = {
                "conversation": ConversationSerializer(
                    result.conversation, context={"request": request}
                ).data,
                "report": result.report,
                "replayed": False,
            }
            # Stored as the record's JSON, so ids and times become their JSON text now.
            return json.loads(json.dumps(body, cls=encoders.JSONEncoder)), 201

        return run_idempotent(request, "roleplay.chat_import", fingerprint, work)
