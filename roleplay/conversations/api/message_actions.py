"""A conversation's messages changed and its turns started through the REST API: the same
services the chat socket uses (``roleplay.conversations.services.messages``, ``roleplay.turns``, the
opening's ``roleplay.conversations.services.conversations.select_opening``), and the same events go
to
every socket on the conversation."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console import ratelimit
from console.failures import BadRequest, DomainError
from console.idempotency import IDEMPOTENCY_KEY
from console.serializers import NoBody, RejectUnknownFields, validated
from memory.models import Message, MessageAlternative
from roleplay import turns
from roleplay.conversations.api.serializers import MessageSerializer, TurnSerializer
from roleplay.conversations.services import conversations, messages
from roleplay.groups import auto as group_auto
from roleplay.models import TurnKind
from roleplay.turns import hub

# DRF's router lists a viewset's actions in name order, and the first route that matches
# wins: the action whose route is ``messages/<id>`` is named ``update_message`` so that it
# comes after ``messages/archive``, ``messages/rollback``... (tests call each of them).
MESSAGE_ID = r"messages/(?P<message_id>[^/.]+)"
MAX_CONTENT_CHARS = 16 * 1024
MESSAGE_ID_PARAM = OpenApiParameter("message_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


class EditBody(RejectUnknownFields, serializers.Serializer):
    content = serializers.CharField(max_length=MAX_CONTENT_CHARS, trim_whitespace=False)


class SelectBody(RejectUnknownFields, serializers.Serializer):
    index = serializers.IntegerField(min_value=0, max_value=10_000)


class RollbackToBody(RejectUnknownFields, serializers.Serializer):
    message_id = serializers.UUIDField()


class OpeningBody(RejectUnknownFields, serializers.Serializer):
    index = serializers.IntegerField(min_value=0, max_value=10_000)


class OpeningSerializer(serializers.Serializer):
    greeting_index = serializers.IntegerField(allow_null=True)
    greetings = serializers.IntegerField()
    opening = serializers.CharField(allow_blank=True)


class TurnBody(RejectUnknownFields, serializers.Serializer):
    """A turn without a socket: it runs to its end before the answer comes back."""

    kind = serializers.ChoiceField(
        choices=[TurnKind.CHAT, TurnKind.REGENERATE, TurnKind.CONTINUE, TurnKind.GROUP],
        default=TurnKind.CHAT,
        help_text="``group``: a member of a group speaks without a new message (docs/groups.md)",
    )
    client_message_id = serializers.CharField(min_length=1, max_length=100)
    content = serializers.CharField(
        max_length=MAX_CONTENT_CHARS, required=False, default="", allow_blank=True
    )
    speaker = serializers.CharField(
        min_length=1,
        max_length=200,
        required=False,
        default=None,
        help_text="In a group: the member who answers (its character's id or name), "
        "force-talk; else the group's rule chooses",
    )
    auto = serializers.BooleanField(
        required=False,
        default=False,
        help_text="In a group with ``auto_turns``: after this turn's reply, up to "
        "``auto_turns`` further members' replies run too (without ``auto_delay_ms``'s pause) "
        "and come back in ``chain`` (docs/groups.md)",
    )


class AlternativeSerializer(serializers.ModelSerializer):
    class Meta:
        model = MessageAlternative
        fields = ["index", "content", "reasoning", "status", "metadata", "created_at"]
        read_only_fields = ["reasoning"]


class AlternativeListSerializer(serializers.Serializer):
    selected = serializers.IntegerField()
    results = AlternativeSerializer(many=True)


class DeletedIdsSerializer(serializers.Serializer):
    deleted = serializers.ListField(child=serializers.UUIDField())


class TurnWarningSerializer(serializers.Serializer):
    """What the player is told of a message let through with a warning (the socket's event
    of the same ``type``, docs/websocket.md)."""

    type = serializers.CharField(help_text="``moderation.warning``")
    category = serializers.CharField()
    categories = serializers.ListField(child=serializers.CharField())
    message = serializers.CharField()


class ChainedTurnSerializer(serializers.Serializer):
    turn = TurnSerializer()
    reply = MessageSerializer(allow_null=True)


class TurnResultSerializer(serializers.Serializer):
    turn = TurnSerializer()
    reply = MessageSerializer(allow_null=True)
    warnings = TurnWarningSerializer(many=True)
    chain = ChainedTurnSerializer(
        many=True, help_text="With ``auto``: the members' replies that followed, in order"
    )


def editor_of(request) -> str:
    """Who changes a message through the API: the token's name, or the console user."""
    principal = request.user
    if getattr(principal, "token", None) is not None:
        return f"token:{principal.token.name}"
    user = getattr(principal, "user", None)
    return f"user:{user.get_username()}" if user is not None else "api"


def _announce(conversation, event: dict) -> None:
    async_to_sync(hub.announce)(conversation.id, event)


class MessageActions:
    """Actions of the conversation viewset on its messages and turns."""

    @extend_schema(request=EditBody, responses=MessageSerializer, parameters=[MESSAGE_ID_PARAM])
    @action(detail=True, methods=["patch"], url_path=MESSAGE_ID)
    def update_message(self, request, pk=None, message_id=None):
        """Replace a message's text; the edit is recorded (who, when, hashes)."""
        conversation = self.get_object()
        content = validated(EditBody, request)["content"]
        if not content.strip():
            raise BadRequest("empty_content", "content must not be only white space")
        message = messages.edit_message(
            conversation, message_id, content, editor=editor_of(request)
        )
        _announce(conversation, hub.message_updated(message))
        return Response(MessageSerializer(message).data)

    @extend_schema(responses={200: DeletedIdsSerializer}, parameters=[MESSAGE_ID_PARAM])
    @update_message.mapping.delete
    def delete_message(self, request, pk=None, message_id=None):
        """Delete one message; the messages before and after it stay."""
        conversation = self.get_object()
        ids = messages.delete_message(conversation, message_id)
        _announce(conversation, {"type": "messages.deleted", "message_ids": ids})
        return Response({"deleted": ids})

    @extend_schema(request=OpeningBody, responses=OpeningSerializer)
    @action(detail=True, methods=["post"], url_path="opening")
    def opening(self, request, pk=None):
        """Open the conversation with another of the card's greetings (0 its first message,
        n its n-th alternate greeting), before its first message only."""
        conversation = self.get_object()
        index = validated(OpeningBody, request)["index"]
        state = conversations.opening_state(conversations.select_opening(conversation, index))
        _announce(conversation, {"type": "conversation.updated", **state})
        return Response(state)

    @extend_schema(responses=AlternativeListSerializer, parameters=[MESSAGE_ID_PARAM])
    @action(detail=True, methods=["get"], url_path=f"{MESSAGE_ID}/alternatives")
    def alternatives(self, request, pk=None, message_id=None):
        """A message's alternatives (swipes), in order, and which one it shows."""
        conversation = self.get_object()
        message = messages.message_of(conversation, message_id)
        rows = MessageAlternative.objects.filter(message=message).order_by("index")
        return Response(
            {
                "selected": message.selected_alternative,
                "results": AlternativeSerializer(rows, many=True).data,
            }
        )

    @extend_schema(request=SelectBody, responses=MessageSerializer, parameters=[MESSAGE_ID_PARAM])
    @action(detail=True, methods=["post"], url_path=f"{MESSAGE_ID}/select-alternative")
    def select_alternative(self, request, pk=None, message_id=None):
        """Make one alternative the text history and every capability see."""
        conversation = self.get_object()
        index = validated(SelectBody, request)["index"]
        message = messages.select_alternative(conversation, message_id, index)
        _announce(conversation, hub.message_updated(message))
        return Response(MessageSerializer(message).data)

    @extend_schema(request=NoBody, responses=DeletedIdsSerializer)
    @action(detail=True, methods=["post"], url_path="messages/delete-last")
    def delete_last(self, request, pk=None):
        """Delete the last exchange (the last player message and what follows it)."""
        conversation = self.get_object()
        validated(NoBody, request)
        ids = messages.delete_last_exchange(conversation)
        _announce(conversation, {"type": "messages.deleted", "message_ids": ids})
        return Response({"deleted": ids})

    @extend_schema(request=RollbackToBody, responses=DeletedIdsSerializer)
    @action(detail=True, methods=["post"], url_path="messages/rollback-to")
    def rollback_to(self, request, pk=None):
        """Delete a message and every later one."""
        conversation = self.get_object()
        message_id = validated(RollbackToBody, request)["message_id"]
        ids = messages.rollback_to(conversation, message_id)
        _announce(conversation, {"type": "messages.deleted", "message_ids": ids})
        return Response({"deleted": ids})

    @extend_schema(
        request=TurnBody,
        responses={201: TurnResultSerializer, 200: TurnResultSerializer},
        parameters=[IDEMPOTENCY_KEY],
    )
    @action(detail=True, methods=["post"], url_path="turns/run")
    def run_turn(self, request, pk=None):
        """Run a turn (``chat``, ``regenerate`` or ``continue``) to its end and return it with
        its reply. Idempotent by ``client_message_id``: a repeat returns the earlier turn
        (200) as it is now; sockets on the conversation see the turn stream as usual.
        ``warnings``: what the player is told of a message the moderation let through. Bursts
        per caller (``RATE_CHAT_PER_TOKEN_10S``) are a 429 ``rate_limited`` with
        ``Retry-After``, nothing stored."""
        conversation = self.get_object()
        body = validated(TurnBody, request)
        if body["kind"] == TurnKind.CHAT and not body["content"].strip():
            raise BadRequest("empty_content", "a chat turn needs content")
        ratelimit.rest_turn(request.user)
        before = conversation.turns.filter(client_message_id=body["client_message_id"]).exists()
        turn = turns.run_to_end(
            conversation, body["client_message_id"], body["content"], kind=body["kind"],
            speaker=body["speaker"],
        )  # fmt: skip
        chain = _auto_chain(conversation, turn) if body["auto"] else []
        data = {
            **_with_reply(request.tenant, turn),
            "warnings": (turn.trace or {}).get("warnings", []),
            "chain": [_with_reply(request.tenant, t) for t in chain],
        }
        return Response(data, status=200 if before else 201)


def _auto_chain(conversation, turn) -> list:
    """The REST door's auto-mode after ``turn``: each further member's turn run to its end,
    one after another, with no pause (a caller has no page to read at a pace), while the
    group's rules let it follow (``roleplay.groups.auto``); the turns that ran (a repeated
    call gives the same ones, running nothing). A turn that cannot start (every member
    muted, a quota) ends the chain, as on the socket."""
    found = group_auto.chain_settings(conversation.pk)
    if found is None:
        return []
    conversation, remaining = found
    chain = []
    while remaining > 0:
        ran = group_auto.followed_by(turn)  # a repeated call walks the chain it ran
        if ran is None and not group_auto.may_follow(turn, conversation):
            break
        if ran is None:
            try:
                ran = turns.run_to_end(
                    conversation, group_auto.next_client_id(turn), kind=TurnKind.GROUP
                )
            except DomainError:
                break
        chain.append(ran)
        turn, remaining = ran, remaining - 1
    return chain


def _with_reply(tenant, turn) -> dict:
    reply = Message.objects.filter(tenant=tenant, pk=turn.assistant_message_id).first()
    return {"turn": TurnSerializer(turn).data, "reply": reply and MessageSerializer(reply).data}
