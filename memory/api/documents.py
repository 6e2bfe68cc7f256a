"""``/api/v1/conversations/{id}/memory-documents/``: a conversation's JSON memory documents
(seed 000's ``get_memory`` / ``update_memory`` over REST), written through
``memory.documents.services`` like every other door."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.idempotency import IDEMPOTENCY_KEY, run_idempotent
from console.serializers import RejectUnknownFields, validated
from memory.documents import selectors as documents
from memory.documents import services as document_writes
from memory.engine.documents import MAX_SAFE_INTEGER, check_slot

SLOT = r"memory-documents/(?P<slot>[^/]+)"
SLOT_PARAM = OpenApiParameter(
    "slot", OpenApiTypes.STR, OpenApiParameter.PATH, description="1-64 of A-Z a-z 0-9 _ . : -"
)


@extend_schema_field({"type": "object", "additionalProperties": True, "nullable": True})
class MemoryField(serializers.JSONField):
    """A document: a JSON object (null for an empty slot)."""


@extend_schema_field({"type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER - 2})
class RevisionField(serializers.JSONField):
    """Any JSON on input: the document rules (memory.engine.documents) answer a wrong type
    or range with their own code, as every door does."""


class PutBody(RejectUnknownFields, serializers.Serializer):
    """The whole new object and the revision it was based on (0 for an empty slot)."""

    expectedRevision = RevisionField(allow_null=True)  # noqa: N815 - the seed's name
    memory = MemoryField(allow_null=True)


class DocumentSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    memory = MemoryField(allow_null=True)


class RevisionSerializer(serializers.Serializer):
    revision = serializers.IntegerField()


class HistoryItemSerializer(DocumentSerializer):
    origin = serializers.CharField()
    created_at = serializers.DateTimeField()


class SlotSerializer(serializers.Serializer):
    slot = serializers.CharField()
    revision = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class SlotListSerializer(serializers.Serializer):
    results = SlotSerializer(many=True)


class HistorySerializer(serializers.Serializer):
    results = HistoryItemSerializer(many=True)


class MemoryDocumentActions:
    """Actions of the conversation viewset on its memory documents."""

    @extend_schema(
        responses=SlotListSerializer, operation_id="api_v1_conversations_memory_documents_list"
    )
    @action(detail=True, methods=["get"], url_path="memory-documents")
    def memory_documents(self, request, pk=None):
        """The conversation's non-empty slots."""
        conversation = self.get_object()
        rows = documents.slots(request.tenant, str(conversation.id))
        return Response({"results": SlotSerializer(rows, many=True).data})

    @extend_schema(methods=["get"], responses=DocumentSerializer, parameters=[SLOT_PARAM])
    @extend_schema(
        methods=["put"],
        request=PutBody,
        responses=RevisionSerializer,
        parameters=[SLOT_PARAM, IDEMPOTENCY_KEY],
    )
    @action(detail=True, methods=["get", "put"], url_path=SLOT)
    def memory_document(self, request, pk=None, slot=None):
        """GET: ``{revision, memory}`` (an empty slot is ``{revision: 0, memory: null}``).
        PUT ``{expectedRevision, memory}``: replace the whole object if the slot is still at
        ``expectedRevision``; answers the new revision, or 409 ``revision_conflict`` with
        ``details.current_revision``."""
        conversation = self.get_object()
        slot = check_slot(slot)
        session_id = str(conversation.id)
        if request.method == "GET":
            return Response(documents.read_document(request.tenant, session_id, slot))
        data = validated(PutBody, request)

        def work():
            revision = document_writes.put_document(
                request.tenant,
                session_id,
                slot,
                data["expectedRevision"],
                data["memory"],
                origin="api",
            )
            return {"revision": revision}, 200

        scope = f"memory.document:{session_id}:{slot}"
        return run_idempotent(request, scope, request.data, work)

    @extend_schema(responses=HistorySerializer, parameters=[SLOT_PARAM])
    @action(detail=True, methods=["get"], url_path=f"{SLOT}/history")
    def memory_document_history(self, request, pk=None, slot=None):
        """The slot's revisions, newest first (at most 50)."""
        conversation = self.get_object()
        rows = documents.document_history(request.tenant, str(conversation.id), check_slot(slot))
        return Response({"results": HistoryItemSerializer(rows, many=True).data})
