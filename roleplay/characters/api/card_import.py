"""``POST /api/v1/characters/import``: a card file (multipart ``file``) becomes a character.

CCv2 and CCv3, as JSON, PNG or ``.charx``, at most 16 MiB, with the worldbook importer's
PNG, decompression and CRC limits (``roleplay.characters.services.card_import``). The answer is the
character, the import report (every card field mapped, kept in ``extensions`` or dropped,
and the embedded book's own report) and the books bound to it: ``201``, or ``200`` with
``deduplicated: true`` when the same file (by SHA-256) was imported before and
``on_duplicate`` is ``existing`` (the default); ``copy`` makes another character.
``Idempotency-Key`` replays the first answer of a retried upload.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers

from console.idempotency import IDEMPOTENCY_KEY
from console.models import Scope
from console.uploads import FileImportView
from roleplay.characters.api.serializers import CharacterSerializer
from roleplay.characters.cards.read import MAX_FILE_BYTES
from roleplay.characters.services.card_import import ON_DUPLICATE, import_card
from roleplay.errors import FieldErrors

FIELDS = ("file", "on_duplicate")
CARD_UPLOAD = {
    "multipart/form-data": {
        "type": "object",
        "properties": {
            "file": {"type": "string", "format": "binary"},
            "on_duplicate": {"type": "string", "enum": list(ON_DUPLICATE), "default": "existing"},
        },
        "required": ["file"],
    }
}


class BoundBookSerializer(serializers.Serializer):
    """A book bound to the character: ``revision`` is the pinned revision, null when the
    binding follows the book's head (an imported card's book does)."""

    book_id = serializers.UUIDField()
    name = serializers.CharField()
    revision = serializers.IntegerField(
        allow_null=True, help_text="the pinned revision; null: the binding follows the head"
    )


class CardImportSerializer(serializers.Serializer):
    character = CharacterSerializer()
    report = serializers.DictField()
    books = BoundBookSerializer(many=True)
    deduplicated = serializers.BooleanField()
    replayed = serializers.BooleanField()


class CharacterImportView(FileImportView):
    required_scope = Scope.CONTENT
    max_file_bytes = MAX_FILE_BYTES
    operation = "roleplay.character_import"

    @extend_schema(
        request=CARD_UPLOAD,
        responses={201: CardImportSerializer, 200: CardImportSerializer},
        parameters=[IDEMPOTENCY_KEY],
    )
    def post(self, request):
        unknown = sorted(set(request.data) - set(FIELDS))
        if unknown:
            raise FieldErrors({name: ["unknown field"] for name in unknown})
        mode = request.data.get("on_duplicate") or "existing"
        name, data = self.received(request)

        def work():
            result = import_card(request.tenant, name, data, on_duplicate=mode)
            body = {
                "character": CharacterSerializer(result.character).data,
                "report": result.report,
                "books": result.books,
                "deduplicated": result.deduplicated,
                "replayed": False,
            }
            return body, 200 if result.deduplicated else 201

        return self.imported(request, data, {"filename": name, "on_duplicate": mode}, work)
