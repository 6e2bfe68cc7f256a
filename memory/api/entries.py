"""``/api/v1/players/{id}/memory/entries/``: a player's memory entries (seed 004's management
actions as REST), written through ``memory.entries.services`` like every other door.

A character or conversation an entry names must be the tenant's (else "not found"), and a
conversation must be the player's own. Every change but a create names the entry's current
``version``; a stale one is a 409 ``version_conflict``.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.idempotency import IDEMPOTENCY_KEY, run_idempotent
from console.owners import character_model, conversation_model
from console.scoping import LOOKUP_MISSES
from console.serializers import RejectUnknownFields, StrictCharField, optional_reference, validated
from memory.entries import selectors as entries
from memory.entries import services as entry_writes
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.models import EntryKind, EntryScope, EntryStatus, MemoryEntry

ENTRY = r"memory/entries/(?P<entry_id>[^/.]+)"
ENTRY_PARAM = OpenApiParameter("entry_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


class EntrySerializer(serializers.ModelSerializer):
    """An entry; ``character`` and ``conversation`` are null when it names none."""

    character = serializers.SerializerMethodField()
    conversation = serializers.SerializerMethodField()

    def get_character(self, entry) -> str | None:
        return entry.character_id or None

    def get_conversation(self, entry) -> str | None:
        return entry.session_id or None

    class Meta:
        model = MemoryEntry
        fields = [
            "id",
            "kind",
            "scope",
            "content",
            "category_key",
            "tags",
            "status",
            "pinned",
            "origin",
            "source_missing",
            "share_in_session",
            "character",
            "conversation",
            "supersedes",
            "version",
            "expires_at",
            "created_at",
            "updated_at",
            "last_used_at",
        ]


class EvidenceSerializer(serializers.Serializer):
    """Where an entry was learned: the stored message and the (scrubbed) quote of the span."""

    message_id = serializers.UUIDField()
    quote = serializers.CharField()
    created_at = serializers.DateTimeField()


class EntryDetailSerializer(EntrySerializer):
    """One entry with its evidence, oldest first (seed 004's source snippets)."""

    evidence = serializers.SerializerMethodField()

    @extend_schema_field(EvidenceSerializer(many=True))
    def get_evidence(self, entry) -> list[dict]:
        rows = entry.evidence.order_by("created_at", "pk").only("message_id", "quote", "created_at")
        return EvidenceSerializer(rows, many=True).data

    class Meta(EntrySerializer.Meta):
        fields = [*EntrySerializer.Meta.fields, "evidence"]


class EntryListSerializer(serializers.Serializer):
    results = EntrySerializer(many=True)


class EntryQuery(serializers.Serializer):
    kind = serializers.ChoiceField(choices=EntryKind.choices, required=False)
    scope = serializers.ChoiceField(choices=EntryScope.choices, required=False)
    status = serializers.ChoiceField(choices=EntryStatus.choices, required=False)
    character = serializers.UUIDField(required=False)
    conversation = serializers.UUIDField(required=False)


class NewEntry(RejectUnknownFields, serializers.Serializer):
    kind = serializers.ChoiceField(choices=EntryKind.choices)
    scope = serializers.ChoiceField(choices=EntryScope.choices)
    content = StrictCharField(max_length=20_000, trim_whitespace=False)
    category_key = StrictCharField(max_length=200, required=False, default="", allow_blank=True)
    tags = serializers.ListField(
        child=StrictCharField(max_length=200), required=False, default=list
    )
    character = optional_reference(character_model)
    conversation = optional_reference(conversation_model)
    share_in_session = serializers.BooleanField(required=False, default=False)
    status = serializers.ChoiceField(
        choices=[EntryStatus.ACTIVE, EntryStatus.CANDIDATE], required=False, default="active"
    )
    pinned = serializers.BooleanField(required=False, default=False)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class EntryChange(RejectUnknownFields, serializers.Serializer):
    version = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    content = StrictCharField(max_length=20_000, trim_whitespace=False, required=False)
    category_key = StrictCharField(max_length=200, required=False, allow_blank=True)
    tags = serializers.ListField(child=StrictCharField(max_length=200), required=False)
    share_in_session = serializers.BooleanField(required=False)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)


class VersionBody(RejectUnknownFields, serializers.Serializer):
    version = serializers.IntegerField(min_value=1, max_value=2**31 - 1)


class MemoryEntryActions:
    """Actions of the player viewset on the player's memory entries."""

    def _entry(self, request, entry_id) -> MemoryEntry:
        player = self.get_object()
        try:
            found = entries.owner_entry(request.tenant, player, entry_id)
        except LOOKUP_MISSES:  # a malformed id is "not found" too
            found = None
        if found is None:
            raise MemoryNotFound(message="no such memory entry")
        return found

    @extend_schema(
        methods=["get"],
        parameters=[EntryQuery],
        responses=EntryListSerializer,
        operation_id="api_v1_players_memory_entries_list",
    )
    @extend_schema(
        methods=["post"],
        request=NewEntry,
        responses={201: EntrySerializer},
        parameters=[IDEMPOTENCY_KEY],
        operation_id="api_v1_players_memory_entries_create",
    )
    @action(detail=True, methods=["get", "post"], url_path="memory/entries")
    def memory_entries(self, request, pk=None):
        """GET: the player's entries (filters ``kind``, ``scope``, ``status``, ``character``,
        ``conversation``), newest change first. POST: a new entry (active, or a candidate to
        review); an active preference or agreement supersedes the one of its category."""
        player = self.get_object()
        if request.method == "GET":
            query = validated(EntryQuery, request, request.query_params)
            rows = entries.owner_entries(
                request.tenant,
                player,
                kind=query.get("kind"),
                scope=query.get("scope"),
                status=query.get("status"),
                character_id=str(query.get("character") or ""),
                session_id=str(query.get("conversation") or ""),
            )
            return Response({"results": EntrySerializer(rows, many=True).data})
        body = validated(NewEntry, request)
        conversation = body["conversation"]
        if conversation is not None and conversation.player_id != player.pk:
            raise MemoryInvalid("conversation_not_players", "the conversation is another player's")

        def work():
            entry = entry_writes.add_entry(
                request.tenant,
                player,
                kind=body["kind"],
                scope=body["scope"],
                content=body["content"],
                category_key=body["category_key"],
                tags=body["tags"],
                character_id=str(body["character"].pk) if body["character"] else "",
                session_id=conversation.session_id if conversation else "",
                share_in_session=body["share_in_session"],
                status=body["status"],
                pinned=body["pinned"],
                expires_at=body["expires_at"],
            )
            return EntrySerializer(entry).data, 201

        return run_idempotent(request, f"memory.entry:{player.pk}", request.data, work)

    @extend_schema(methods=["get"], responses=EntryDetailSerializer, parameters=[ENTRY_PARAM])
    @extend_schema(
        methods=["patch"],
        request=EntryChange,
        responses=EntryDetailSerializer,
        parameters=[ENTRY_PARAM],
    )
    @extend_schema(
        methods=["delete"],
        request=VersionBody,
        responses={204: None},
        parameters=[ENTRY_PARAM],
    )
    @action(detail=True, methods=["get", "patch", "delete"], url_path=ENTRY)
    def memory_entry(self, request, pk=None, entry_id=None):
        """GET one entry with its evidence; PATCH its text, category, tags, sharing or
        expiry; DELETE it (its evidence and handoff references go with it). PATCH and DELETE
        name its ``version``."""
        entry = self._entry(request, entry_id)
        if request.method == "GET":
            return Response(EntryDetailSerializer(entry).data)
        if request.method == "DELETE":
            body = validated(VersionBody, request)
            entry_writes.delete_entry(request.tenant, entry, body["version"])
            return Response(status=204)
        body = validated(EntryChange, request)
        version = body.pop("version")
        entry = entry_writes.update_entry(request.tenant, entry, version, **body)
        return Response(EntryDetailSerializer(entry).data)

    def _version_action(self, request, entry_id, write):
        entry = self._entry(request, entry_id)
        version = validated(VersionBody, request)["version"]
        return Response(EntrySerializer(write(request.tenant, entry, version)).data)

    @extend_schema(request=VersionBody, responses=EntrySerializer, parameters=[ENTRY_PARAM])
    @action(detail=True, methods=["post"], url_path=f"{ENTRY}/accept")
    def memory_entry_accept(self, request, pk=None, entry_id=None):
        """A candidate becomes active (superseding the active one of its category)."""
        return self._version_action(request, entry_id, entry_writes.accept)

    @extend_schema(request=VersionBody, responses=EntrySerializer, parameters=[ENTRY_PARAM])
    @action(detail=True, methods=["post"], url_path=f"{ENTRY}/reject")
    def memory_entry_reject(self, request, pk=None, entry_id=None):
        """A candidate is set aside: kept, never selected."""
        return self._version_action(request, entry_id, entry_writes.reject)

    @extend_schema(request=VersionBody, responses=EntrySerializer, parameters=[ENTRY_PARAM])
    @action(detail=True, methods=["post"], url_path=f"{ENTRY}/pin")
    def memory_entry_pin(self, request, pk=None, entry_id=None):
        """Pinned: first within its scope, never recycled."""
        return self._version_action(
            request, entry_id, lambda t, e, v: entry_writes.set_pinned(t, e, v, True)
        )

    @extend_schema(request=VersionBody, responses=EntrySerializer, parameters=[ENTRY_PARAM])
    @action(detail=True, methods=["post"], url_path=f"{ENTRY}/unpin")
    def memory_entry_unpin(self, request, pk=None, entry_id=None):
        """No longer pinned."""
        return self._version_action(
            request, entry_id, lambda t, e, v: entry_writes.set_pinned(t, e, v, False)
        )
