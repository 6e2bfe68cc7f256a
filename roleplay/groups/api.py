"""``/api/v1/conversations/{id}/members/``: a group's members (list, add) and
``.../members/{member_id}/`` (change, remove), ``member_id`` being the member's character
id. Composed into the conversation viewset (``roleplay/api/views.py``); the group's
settings are fields of the conversation itself."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.serializers import RejectUnknownFields, TenantRelatedField, validated
from roleplay.models import Character

from . import services
from .selectors import member_json, members_of

MEMBER_ID = r"members/(?P<member_id>[^/.]+)"
MEMBER_ID_PARAM = OpenApiParameter(
    "member_id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="the member's character id"
)


class MemberSerializer(serializers.Serializer):
    character = serializers.UUIDField(help_text="the member's character id")
    name = serializers.CharField()
    position = serializers.IntegerField(help_text="0: the conversation's own character")
    muted = serializers.BooleanField()
    talkativeness = serializers.FloatField()


class MemberListSerializer(serializers.Serializer):
    results = MemberSerializer(many=True)


@extend_schema_field(OpenApiTypes.UUID)
class CharacterRef(TenantRelatedField):
    """A character of the tenant by id, typed for the schema (the body has no model)."""


class MemberBody(RejectUnknownFields, serializers.Serializer):
    character = CharacterRef(Character)
    muted = serializers.BooleanField(default=False)
    talkativeness = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.5)


class MemberPatch(RejectUnknownFields, serializers.Serializer):
    muted = serializers.BooleanField(required=False)
    talkativeness = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    position = serializers.IntegerField(
        min_value=0, max_value=services.MAX_MEMBERS, required=False,
        help_text="1 puts the member right after the conversation's character",
    )  # fmt: skip


class GroupMemberActions:
    """Mixin of ``ConversationViewSet``."""

    @extend_schema(responses=MemberListSerializer)
    @action(detail=True, methods=["get"], url_path="members")
    def members(self, request, pk=None):
        """The group in speaking order: the conversation's character first."""
        conversation = self.get_object()
        return Response({"results": [member_json(m) for m in members_of(conversation)]})

    @extend_schema(request=MemberBody, responses={201: MemberSerializer})
    @members.mapping.post
    def add_member(self, request, pk=None):
        """A character of the tenant joins the group, last."""
        conversation = self.get_object()
        body = validated(MemberBody, request)
        member = services.add_member(conversation, **body)
        return Response(member_json(member), status=201)

    @extend_schema(request=MemberPatch, responses=MemberSerializer, parameters=[MEMBER_ID_PARAM])
    @action(detail=True, methods=["patch"], url_path=MEMBER_ID)
    def member(self, request, pk=None, member_id=None):
        """Mute, unmute, make more or less talkative, or move a member."""
        conversation = self.get_object()
        body = validated(MemberPatch, request)
        return Response(member_json(services.update_member(conversation, member_id, **body)))

    @extend_schema(request=None, responses={204: None}, parameters=[MEMBER_ID_PARAM])
    @member.mapping.delete
    def remove_member(self, request, pk=None, member_id=None):
        """The member leaves the group (its replies stay, under its name)."""
        conversation = self.get_object()
        services.remove_member(conversation, member_id)
        return Response(status=204)
