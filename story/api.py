"""``/api/v1/conversations/{id}/story``: the conversation's Story (seed 002) as an operator
reads it (``story.reads``), and the decisions on its quarantined events.

- ``GET .../story``: the story in force, by the parts of its envelope; revision 0 and status
  ``none`` when the conversation has none yet;
- ``GET .../story/revisions/`` and ``.../story/revisions/{revision}/``: every revision kept,
  newest first, and one in full with what the Actor saw;
- ``GET .../story/events/``: the events, each piece of evidence marked ``changed`` when its
  message was deleted or edited since it was captured;
- ``GET .../story/quarantine/`` and ``POST .../story/quarantine/{quarantine_id}/retry``,
  ``/discard``, ``/resolve`` (a note required): admin scope, each decision audited
  (``story.quarantine``).

The reads are actions of the conversation viewset (the scope of conversations, like
``agent-state``); the quarantine is a view of its own so its admin scope is the view's.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.errors import not_found
from console.models import Scope
from console.owners import RuntimeTable
from console.serializers import RejectUnknownFields, StrictCharField, validated
from console.viewsets import TenantGenericViewSet
from story import quarantine as story_quarantine
from story import reads

REVISION = OpenApiParameter("revision", OpenApiTypes.INT, OpenApiParameter.PATH)
QUARANTINE_ID = OpenApiParameter("quarantine_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


class StorySerializer(serializers.Serializer):
    conversation = serializers.UUIDField()
    scenario = serializers.UUIDField(allow_null=True)
    revision = serializers.IntegerField()
    status = serializers.CharField(
        help_text="`none` (no story yet), `ready`, `waiting_for_acceptance` or "
        "`settlement_pending`."
    )
    world = serializers.DictField(allow_null=True)
    narrative = serializers.DictField(allow_null=True)
    pending = serializers.DictField(
        allow_null=True, help_text="The envelope's `pendingActor` without `prepared`."
    )
    event = serializers.DictField(allow_null=True)
    unresolved = serializers.ListField(child=serializers.DictField())
    updated_at = serializers.DateTimeField(allow_null=True)


class StoryRevisionSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    status = serializers.CharField()
    outcome = serializers.CharField()
    source_position = serializers.IntegerField()
    turn_id = serializers.UUIDField(allow_null=True)
    message_id = serializers.UUIDField(allow_null=True)
    created_at = serializers.DateTimeField()


class StoryRevisionDetailSerializer(StoryRevisionSerializer):
    envelope = serializers.DictField()
    stage = serializers.DictField(
        allow_null=True, help_text="What the Actor saw: `{stage, narrative}`, or null."
    )


class StoryEvidenceSerializer(serializers.Serializer):
    message_id = serializers.CharField()
    sha256 = serializers.CharField()
    kind = serializers.CharField()
    source_position = serializers.IntegerField(allow_null=True)
    changed = serializers.BooleanField(
        help_text="The message was deleted, or its text no longer hashes to `sha256`."
    )


class StoryEventSerializer(serializers.Serializer):
    event_id = serializers.CharField()
    title = serializers.CharField()
    status = serializers.CharField(
        help_text="`open`, `settled`, `unknown`, `quarantined` or `discarded`."
    )
    evidence = StoryEvidenceSerializer(many=True)
    attempts = serializers.ListField(child=serializers.DictField())
    revision = serializers.IntegerField()


class StoryQuarantineSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    event_id = serializers.CharField()
    status = serializers.CharField(help_text="`open`, `retried`, `discarded` or `resolved`.")
    record = serializers.DictField()
    note = serializers.CharField()
    decided_by = serializers.CharField()
    decided_at = serializers.DateTimeField(allow_null=True)
    revision = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class QuarantineDecisionBody(RejectUnknownFields, serializers.Serializer):
    note = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=2000,
        default="",
        help_text="The operator's note; required to resolve.",
    )


class StoryActions:
    """Reads of the conversation viewset on its story."""

    @extend_schema(responses=StorySerializer)
    @action(detail=True, methods=["get"], url_path="story")
    def story(self, request, pk=None):
        """The story in force: its revision and status, the envelope's ``world``,
        ``narrative``, ``pending`` (``pendingActor`` without ``prepared``), ``event`` and
        ``unresolved``; revision 0 and status ``none`` when there is no story yet."""
        conversation = self.get_object()
        head = reads.head_for(request.tenant, conversation)
        return Response(StorySerializer(reads.overview(conversation, head)).data)

    @extend_schema(responses=StoryRevisionSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="story/revisions")
    def story_revisions(self, request, pk=None):
        """The story's revisions, newest first."""
        conversation = self.get_object()
        rows = reads.revisions(
            request.tenant, conversation, reads.head_for(request.tenant, conversation)
        )
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(StoryRevisionSerializer(page, many=True).data)

    @extend_schema(parameters=[REVISION], responses=StoryRevisionDetailSerializer)
    @action(detail=True, methods=["get"], url_path=r"story/revisions/(?P<revision>[^/.]+)")
    def story_revision(self, request, pk=None, revision=None):
        """One revision with its envelope and what the Actor saw (``stage``)."""
        conversation = self.get_object()
        head = reads.head_for(request.tenant, conversation)
        text = str(revision)
        number = int(text) if text.isascii() and text.isdigit() else None
        row = reads.revision(request.tenant, conversation, head, number)
        if row is None:
            raise not_found("this story has no such revision")
        return Response(StoryRevisionDetailSerializer(row).data)

    @extend_schema(responses=StoryEventSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="story/events")
    def story_events(self, request, pk=None):
        """The story's events with their evidence (``changed`` since captured) and attempts."""
        conversation = self.get_object()
        rows = reads.events(
            request.tenant, conversation, reads.head_for(request.tenant, conversation)
        )
        page = reads.with_changes(request.tenant, conversation, self.paginate_queryset(rows))
        return self.get_paginated_response(StoryEventSerializer(page, many=True).data)


class StoryQuarantineViewSet(TenantGenericViewSet):
    """The quarantined events of a conversation's story, and the operator's decisions."""

    model = RuntimeTable("conversation")  # the runtime's: another tenant's id is a 404
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN,)
    serializer_class = StoryQuarantineSerializer

    @extend_schema(responses=StoryQuarantineSerializer(many=True))
    def list(self, request, pk=None):
        """The records, open ones first, then newest first."""
        conversation = self.get_object()
        head = reads.head_for(request.tenant, conversation)
        page = self.paginate_queryset(reads.quarantines(request.tenant, conversation, head))
        return self.get_paginated_response(StoryQuarantineSerializer(page, many=True).data)

    @extend_schema(
        parameters=[QUARANTINE_ID],
        request=QuarantineDecisionBody,
        responses=StoryQuarantineSerializer,
    )
    def retry(self, request, pk=None, quarantine_id=None):
        """Put the event back in the settlement queue; its attempts start again."""
        return self._decide(request, quarantine_id, "retry")

    @extend_schema(
        parameters=[QUARANTINE_ID],
        request=QuarantineDecisionBody,
        responses=StoryQuarantineSerializer,
    )
    def discard(self, request, pk=None, quarantine_id=None):
        """Drop the event for good."""
        return self._decide(request, quarantine_id, "discard")

    @extend_schema(
        parameters=[QUARANTINE_ID],
        request=QuarantineDecisionBody,
        responses=StoryQuarantineSerializer,
    )
    def resolve(self, request, pk=None, quarantine_id=None):
        """Count the event as settled, with a note (422 ``note_required`` without one)."""
        return self._decide(request, quarantine_id, "resolve")

    def _decide(self, request, quarantine_id, decision: str) -> Response:
        conversation = self.get_object()
        record = reads.quarantine(request.tenant, conversation, quarantine_id)
        if record is None:
            raise not_found("this story has no such quarantine record")
        body = validated(QuarantineDecisionBody, request)
        principal = request.user
        decided = story_quarantine.decide(
            record,
            decision,
            note=body["note"],
            by=_actor(principal),
            request=request,
            user=principal.user,
        )
        return Response(StoryQuarantineSerializer(decided).data)


def _actor(principal) -> str:
    """Who decided: the console user, or the API token by name and prefix."""
    if principal.user is not None:
        return principal.user.get_username()
    token = principal.token
    return f"api token {token.name} ({token.prefix})" if token is not None else ""
