"""``/api/v1/conversations/{id}/branches/`` and ``.../bookmarks/``: a conversation's branches
(create one at a message, list them) and its named checkpoints, written through
``roleplay.branches.services`` like every other door.

The named checkpoints live under ``bookmarks/``: ``checkpoints/`` already lists Compact's
summary checkpoints (``roleplay.compact.api``).
"""

from __future__ import annotations

import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.utils import encoders

from console.idempotency import IDEMPOTENCY_KEY, run_idempotent
from console.serializers import RejectUnknownFields, validated
from roleplay.branches import selectors, services
from roleplay.branches.models import MAX_NAME, Bookmark
from roleplay.conversations.api.serializers import ConversationSerializer

LIST_LIMIT = 200
BOOKMARK_ID = r"bookmarks/(?P<bookmark_id>[^/.]+)"
BOOKMARK_ID_PARAM = OpenApiParameter("bookmark_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


class BranchBody(RejectUnknownFields, serializers.Serializer):
    """Branch at ``message_id`` (a message of this conversation's history); with
    ``alternative``, branch just before it with that alternative of it as the branch's
    first message (a swipe of an older reply)."""

    message_id = serializers.UUIDField()
    alternative = serializers.IntegerField(
        min_value=0, max_value=10_000, required=False, allow_null=True, default=None
    )


class BranchListSerializer(serializers.Serializer):
    results = ConversationSerializer(many=True)


class BookmarkBody(RejectUnknownFields, serializers.Serializer):
    message_id = serializers.UUIDField()
    name = serializers.CharField(max_length=MAX_NAME)


class BookmarkSerializer(serializers.ModelSerializer):
    class Meta:
        model = Bookmark
        fields = ["id", "message_id", "name", "created_at"]


class BookmarkListSerializer(serializers.Serializer):
    results = BookmarkSerializer(many=True)


def _plain(data) -> dict:
    """A rendered body as the idempotency record keeps it (plain JSON values)."""
    return json.loads(json.dumps(data, cls=encoders.JSONEncoder))


class BranchActions:
    """Actions of the conversation viewset on its branches and bookmarks."""

    @extend_schema(methods=["get"], responses=BranchListSerializer)
    @extend_schema(
        methods=["post"],
        request=BranchBody,
        responses={201: ConversationSerializer},
        parameters=[IDEMPOTENCY_KEY],
    )
    @action(detail=True, methods=["get", "post"], url_path="branches")
    def branches(self, request, pk=None):
        """GET: the conversations branched from this one, oldest first (at most 200).
        POST ``{message_id}``: a new conversation sharing this one's history up to and
        including that message (``{message_id, alternative}``: up to just before it, then
        that alternative of it)."""
        conversation = self.get_object()
        if request.method == "GET":
            rows = selectors.branches_of(conversation)[:LIST_LIMIT]
            return Response({"results": ConversationSerializer(rows, many=True).data})
        body = validated(BranchBody, request)

        def work():
            branch = services.create_branch(
                conversation, body["message_id"], alternative=body["alternative"]
            )
            return _plain(ConversationSerializer(branch).data), 201

        return run_idempotent(request, f"roleplay.branch:{conversation.pk}", request.data, work)

    @extend_schema(methods=["get"], responses=BookmarkListSerializer)
    @extend_schema(
        methods=["post"],
        request=BookmarkBody,
        responses={201: BookmarkSerializer},
        parameters=[IDEMPOTENCY_KEY],
    )
    @action(detail=True, methods=["get", "post"], url_path="bookmarks")
    def bookmarks(self, request, pk=None):
        """GET: the conversation's named checkpoints, oldest first (at most 200). POST
        ``{message_id, name}``: name a message of its history (a name is unique in the
        conversation: 409 ``duplicate``)."""
        conversation = self.get_object()
        if request.method == "GET":
            rows = selectors.bookmarks_of(conversation)[:LIST_LIMIT]
            return Response({"results": BookmarkSerializer(rows, many=True).data})
        body = validated(BookmarkBody, request)

        def work():
            bookmark = services.add_bookmark(conversation, body["message_id"], body["name"])
            return _plain(BookmarkSerializer(bookmark).data), 201

        return run_idempotent(request, f"roleplay.bookmark:{conversation.pk}", request.data, work)

    @extend_schema(request=None, responses={204: None}, parameters=[BOOKMARK_ID_PARAM])
    @action(detail=True, methods=["delete"], url_path=BOOKMARK_ID)
    def delete_bookmark(self, request, pk=None, bookmark_id=None):
        """Delete a named checkpoint (the message stays)."""
        conversation = self.get_object()
        services.delete_bookmark(conversation, bookmark_id)
        return Response(status=204)
