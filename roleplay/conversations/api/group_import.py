"""``POST /api/v1/conversations/import-group``: a SillyTavern group (multipart ``group``, its
``groups/<id>.json``, at most 1 MiB) and optionally one of its chats (``file``, its
``.jsonl``, as ``POST /conversations/import`` reads it) become one group conversation of
``player`` (``roleplay.conversations.services.group_import``, docs/groups.md).

Form fields as the chat import's, without ``character``: the group's first member is the
conversation's character. The answer (``201``) is the conversation and the import report:
the members (each avatar file and the character it became), the settings taken, what was
dropped, and the chat's counts and speakers. Refused, nothing written:
``invalid_group_file`` or ``invalid_chat_file`` 400; ``empty_group``, ``unknown_member``,
``member_ambiguous``, ``duplicate_member``, ``group_full``, ``invalid_text`` and the chat
import's 422s; ``file_too_large`` 413. ``Idempotency-Key`` replays the first answer.
"""

from __future__ import annotations

import hashlib

from drf_spectacular.utils import extend_schema

from console.failures import FieldErrors
from console.idempotency import IDEMPOTENCY_KEY
from console.models import Scope
from console.serializers import validated
from console.uploads import FileImportView, uploaded_file
from roleplay.conversations.api.chat_import import (
    CHAT_UPLOAD,
    ChatImportFields,
    ChatImportSerializer,
    created,
    options,
)
from roleplay.conversations.chats.group_file import MAX_GROUP_BYTES
from roleplay.conversations.chats.read import MAX_FILE_BYTES
from roleplay.conversations.services.group_import import import_group

_FORM = CHAT_UPLOAD["multipart/form-data"]
GROUP_UPLOAD = {
    "multipart/form-data": {
        "type": "object",
        "properties": {
            "group": {"type": "string", "format": "binary"},
            **{key: value for key, value in _FORM["properties"].items() if key != "character"},
        },
        "required": ["group", "player"],
    }
}


class GroupImportFields(ChatImportFields):
    character = None  # the group's first member


class ConversationGroupImportView(FileImportView):
    required_scope = Scope.PLAY
    max_file_bytes = MAX_FILE_BYTES + MAX_GROUP_BYTES
    operation = "roleplay.group_import"

    @extend_schema(
        request=GROUP_UPLOAD,
        responses={201: ChatImportSerializer},
        parameters=[IDEMPOTENCY_KEY],
    )
    def post(self, request):
        fields = {key: request.data.get(key) for key in request.data if key not in _FILES}
        given = validated(GroupImportFields, request, fields)
        _, group = uploaded_file(request, "group", MAX_GROUP_BYTES)
        name, chat = _chat(request)

        def work():
            result = import_group(
                request.tenant,
                group,
                chat,
                **options(given, name),
            )
            return created(request, result)

        fingerprint = {key: str(value) for key, value in fields.items()}
        fingerprint["group"] = hashlib.sha256(group).hexdigest()
        return self.imported(request, chat or b"", fingerprint, work)


_FILES = ("group", "file")


def _chat(request) -> tuple[str, bytes | None]:
    """The optional chat file: (name, bytes), or ("", None) when none was sent."""
    if not request.FILES.getlist("file"):
        if "file" in request.data:
            raise FieldErrors({"file": ["send the chat as a file, or leave it out"]})
        return "", None
    return uploaded_file(request, "file", MAX_FILE_BYTES)
