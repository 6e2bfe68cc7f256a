"""The chat socket: ``/ws/conversations/<id>/`` (protocol in docs/websocket.md)."""

from __future__ import annotations

import asyncio
import json
import logging
from urllib.parse import parse_qs

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from console import ratelimit
from console.auth import principal_for_user
from console.db import run_db
from console.failures import DomainError
from console.scoping import canonical_uuid, is_uuid
from console.storable import UnstorableText
from console.storable import loads as loads_json
from console.tickets import redeem_ticket
from roleplay import turns
from roleplay.accounts.sockets import player_for_user
from roleplay.conversations.services import auto_replies, conversations, messages
from roleplay.models import Conversation, TurnKind
from roleplay.moderation import notices
from roleplay.moderation.selectors import describe, sanction_of
from roleplay.turns import cancels, hub
from roleplay.turns.priority import STARTS

from . import group_chain
from .group_frames import TRIGGER, GroupFrames

logger = logging.getLogger(__name__)

MAX_CLIENT_ID = 100


def _origin_allowed(scope) -> bool:
    headers = dict(scope.get("headers") or [])
    origin = headers.get(b"origin")
    if origin is None:
        return True
    host = origin.decode("latin-1").split("://", 1)[-1].split(":", 1)[0].lower()
    return "*" in settings.ALLOWED_HOSTS or host in settings.ALLOWED_HOSTS


@sync_to_async
def _authorize(scope, conversation_id: str):
    """(conversation, can_write, editor) for this socket, or None. Foreign ids look absent.
    ``editor`` names who edits through it: the conversation's player for a ticket (an
    integrator's player client), the console user for a session."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    ticket = (query.get("ticket") or [""])[0]
    conv = Conversation.objects.select_related("tenant").filter(pk=conversation_id)
    if ticket:
        tenant_id = redeem_ticket(ticket, str(conversation_id))
        found = conv.filter(tenant_id=tenant_id).first() if tenant_id else None
        return (found, True, f"player:{found.player_id}") if found else None
    if not _origin_allowed(scope):
        return None
    principal = principal_for_user(scope.get("user"))
    if principal is None:  # a player signed in on /app/: their own conversations only
        player = player_for_user(scope.get("user"))
        found = conv.filter(tenant_id=player.tenant_id, player=player).first() if player else None
        return (found, True, f"player:{player.pk}") if found else None
    found = conv.filter(tenant=principal.tenant).first()
    editor = f"user:{principal.user.get_username()}" if principal.user else "user"
    return (found, not principal.read_only, editor) if found else None


class ConversationConsumer(GroupFrames, AsyncWebsocketConsumer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._background: set[asyncio.Task] = set()  # auto-reply suggestions in flight

    async def connect(self):
        conversation_id = canonical_uuid(self.scope["url_route"]["kwargs"]["conversation_id"])
        access = await _authorize(self.scope, conversation_id) if conversation_id else None
        if access is None:  # unknown, foreign, malformed or not allowed: one answer
            await self.close(code=4404)
            return
        self.conversation, self.can_write, self.editor = access
        self.group = hub.group_name(self.conversation.id)
        # The group brings events of turns running in other processes (and cancels); turns
        # running here reach the socket through the hub.
        await self.channel_layer.group_add(self.group, self.channel_name)
        # A player's socket (a ticket, an /app/ session; not an operator watching) joins the
        # player's group: a suspension closes every socket of theirs at once.
        self.player_group = None
        if self.editor.startswith("player:"):
            self.player_group = notices.player_group(self.conversation.player_id)
            await self.channel_layer.group_add(self.player_group, self.channel_name)
        await self.accept()
        hub.join(self.conversation.id, self)
        # an integrator's suspended player, with a fresh ticket
        sanction = (
            await run_db(sanction_of, self.conversation.player_id) if self.player_group else None
        )
        if sanction is not None:
            await self.player_closed({"reason": describe(sanction)})

    async def player_closed(self, message: dict) -> None:
        """The player was suspended or banned: say so, and close (4423)."""
        await self._error("player_suspended", message.get("reason") or "account suspended")
        await self.close(code=4423)

    async def disconnect(self, code):
        for task in list(self._background):
            task.cancel()
        group = getattr(self, "group", None)
        if group:
            hub.leave(self.conversation.id, self)
            await self.channel_layer.group_discard(group, self.channel_name)
            if getattr(self, "player_group", None):
                await self.channel_layer.group_discard(self.player_group, self.channel_name)

    async def _error(self, code: str, message: str, **extra) -> None:
        await self.send(json.dumps({"type": "error", "code": code, "message": message, **extra}))

    async def receive(self, text_data=None, bytes_data=None):
        if text_data is None:
            await self._error("invalid_json", "send JSON text frames")
            return
        if len(text_data.encode()) > turns.MAX_CONTENT_BYTES * 2:
            await self._error("message_too_large", "frame larger than 32 KiB")
            return
        try:  # bounded like an API body: depth, numbers, text the database can store
            data = loads_json(text_data, "frame")
        except UnstorableText as exc:
            await self._error("invalid_text", str(exc))
            return
        except ValueError as exc:
            await self._error("invalid_json", f"frame is not valid JSON: {exc}")
            return
        if not isinstance(data, dict):
            await self._error("invalid_message", "frame must be a JSON object")
            return
        kind = data.get("type")
        handler = self.FRAMES.get(kind) if isinstance(kind, str) else None
        if handler is None:
            await self._error("unknown_type", f"unknown message type {kind!r}")
            return
        if not self.can_write:
            await self._error("forbidden", "this session can only watch the conversation")
            return
        await handler(self, data)

    async def _user_message(self, data: dict) -> None:
        client_id = await self._client_id(data)
        if client_id is None:
            return
        content = await self._content(data)
        if content is None:
            return
        group_chain.stop(self.conversation.id)  # any player message stops auto-mode
        command, _, name = content.strip().partition(" ")
        if command == TRIGGER:  # "/trigger Mira": that member speaks, no message is stored
            await self._trigger_turn(client_id, name.strip() or None)
            return
        speaker = await self._speaker(data, "speaker")
        if speaker is not False:
            await self._follow(await self._start(client_id, TurnKind.CHAT, content, speaker))

    async def _regenerate(self, data: dict) -> None:
        client_id = await self._client_id(data)
        if client_id is not None:
            await self._start(client_id, TurnKind.REGENERATE)

    async def _continue(self, data: dict) -> None:
        client_id = await self._client_id(data)
        if client_id is not None:
            await self._start(client_id, TurnKind.CONTINUE)

    async def _content(self, data: dict) -> str | None:
        """The frame's ``content``: a non-empty string of at most 16 KiB, else an error."""
        content = data.get("content")
        if not isinstance(content, str) or not content.strip():
            await self._error("empty_content", "content must be a non-empty string")
            return None
        if len(content.encode()) > turns.MAX_CONTENT_BYTES:
            await self._error("content_too_long", "content is larger than 16 KiB")
            return None
        return content

    async def _client_id(self, data: dict) -> str | None:
        client_id = data.get("client_message_id")
        if not isinstance(client_id, str) or not client_id or len(client_id) > MAX_CLIENT_ID:
            await self._error("invalid_message", "client_message_id must be a 1-100 char string")
            return None
        return client_id

    async def _start(
        self, client_id: str, kind: str, content: str = "", speaker: str | None = None
    ):
        """Start a turn of ``kind``: ``turn.started``, then its stream, from a task; the
        turn, that task and its context (or its load failure), or None when none started.
        ``speaker``: a group member who must answer."""
        STARTS.begin()  # from here until the turn's first delta, it goes before streams
        try:
            start, preloaded = await run_db(
                _limited_begin, (self.editor, ratelimit.socket_address(self.scope)),
                self.conversation, client_id, content, kind=kind, speaker=speaker,
            )  # fmt: skip
        except BaseException as exc:
            STARTS.end()
            if isinstance(exc, DomainError):  # turn_in_progress, nothing_to_rewrite, limits
                # A quota's refusal says which limit, what was used and when to retry.
                said = exc.details if exc.kind == "too_many" else {}
                await self._error(exc.code, exc.message, client_message_id=client_id, **said)
                return None
            if isinstance(exc, turns.STORAGE_ERRORS):  # the socket stays; the player retries
                logger.warning("cannot start a turn: the database is unavailable", exc_info=True)
                await self._error(
                    "storage_unavailable",
                    "the message could not be saved; try again in a moment",
                    client_message_id=client_id,
                )
                return None
            raise
        turn = start.turn
        event = turns.started_event(start, client_id, preloaded)
        if start.duplicate:
            STARTS.end()
            await self.send(json.dumps({**event, "duplicate": True, "status": turn.status}))
            return None
        return turn, turns.launch(turn, event, preloaded), preloaded

    async def _edit(self, data: dict) -> None:
        """``edit``: new text for a message; with ``regenerate``, a new reply after it."""
        content = await self._content(data)
        if content is None:
            return
        regenerate = data.get("regenerate", False)
        if not isinstance(regenerate, bool):
            await self._error("invalid_message", "regenerate must be true or false")
            return
        client_id = await self._client_id(data) if regenerate else None
        if regenerate and client_id is None:
            return
        message = await self._change(
            messages.edit_message, data.get("message_id"), content, editor=self.editor
        )
        if message is not None:
            await hub.announce(self.conversation.id, await run_db(hub.message_updated, message))
            if regenerate:
                await self._start(client_id, TurnKind.EDIT_REGENERATE)

    async def _select_alternative(self, data: dict) -> None:
        index = data.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            await self._error("invalid_message", "index must be a non-negative integer")
            return
        message = await self._change(messages.select_alternative, data.get("message_id"), index)
        if message is not None:
            await hub.announce(self.conversation.id, await run_db(hub.message_updated, message))

    async def _delete(self, data: dict) -> None:
        """``delete``: the last exchange, or (with ``message_id``) that message and all after."""
        message_id = data.get("message_id")
        if message_id is None:
            ids = await self._change_all(messages.delete_last_exchange)
        else:
            ids = await self._change(messages.rollback_to, message_id)
        if ids is not None:
            event = {"type": "messages.deleted", "message_ids": ids}
            await hub.announce(self.conversation.id, event)

    async def _delete_message(self, data: dict) -> None:
        """``delete_message``: that message alone; the ones before and after it stay."""
        ids = await self._change(messages.delete_message, data.get("message_id"))
        if ids is not None:
            event = {"type": "messages.deleted", "message_ids": ids}
            await hub.announce(self.conversation.id, event)

    async def _select_opening(self, data: dict) -> None:
        """``select_opening``: another of the card's greetings opens the conversation."""
        index = data.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            await self._error("invalid_message", "index must be a non-negative integer")
            return
        changed = await self._change_all(conversations.select_opening, index)
        if changed is not None:
            state = await run_db(conversations.opening_state, changed)
            await hub.announce(self.conversation.id, {"type": "conversation.updated", **state})

    async def _change(self, service, message_id, *args, **kwargs):
        if not isinstance(message_id, str):
            await self._error("invalid_message", "message_id must be a message's id")
            return None
        return await self._change_all(service, message_id, *args, **kwargs)

    async def _change_all(self, service, *args, **kwargs):
        """Run a message service for this conversation; its refusal becomes an error event."""
        try:
            return await run_db(service, self.conversation, *args, **kwargs)
        except DomainError as exc:
            await self._error(exc.code, exc.message)
        except turns.STORAGE_ERRORS:
            await self._error("storage_unavailable", "the change could not be saved")
        return None

    async def _cancel(self, data: dict) -> None:
        group_chain.stop(self.conversation.id)  # auto-mode ends with the reply
        turn_id = str(data.get("turn_id") or "") or None
        turns.request_cancel(str(self.conversation.id), turn_id)  # a turn running here
        try:
            await cancels.send(self.conversation.id, turn_id)  # one running elsewhere
        except Exception:  # Redis is down: only a turn in another process misses the cancel
            logger.warning("could not pass a cancel to other processes", exc_info=True)

    async def _auto_reply(self, data: dict) -> None:
        """``auto_reply {assistant_message_id, language, wait_ms?}``: three suggestions for
        the player's next message, answered as ``auto_reply.options`` (or an ``error``) to
        this socket only, without holding up its other frames."""
        message_id, language = data.get("assistant_message_id"), data.get("language")
        wait_ms = data.get("wait_ms")
        if not isinstance(message_id, str) or not is_uuid(message_id):
            await self._error("invalid_message", "assistant_message_id must be a message's id")
        elif not isinstance(language, str) or not 0 < len(language.strip()) <= 40:
            await self._error("invalid_message", "language must be 1 to 40 characters")
        elif wait_ms is not None and (
            isinstance(wait_ms, bool) or not isinstance(wait_ms, int) or not 0 <= wait_ms <= 120000
        ):
            await self._error("invalid_message", "wait_ms must be an integer from 0 to 120000")
        else:
            task = asyncio.ensure_future(self._suggest(message_id, language.strip(), wait_ms))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _suggest(self, message_id: str, language: str, wait_ms: int | None) -> None:
        try:
            answer = await auto_replies.suggest(
                self.conversation, message_id=message_id, language=language, wait_ms=wait_ms
            )
        except DomainError as exc:
            said = exc.details if exc.kind == "too_many" else {}
            await self._error(exc.code, exc.message, assistant_message_id=message_id, **said)
        except Exception:
            logger.exception("auto-reply suggestions failed")
            await self._error("internal_error", "could not suggest replies")
        else:
            event = {"type": "auto_reply.options", "assistant_message_id": message_id, **answer}
            await self.send(json.dumps(event))

    FRAMES = {
        "user_message": _user_message,
        "regenerate": _regenerate,
        "continue": _continue,
        "edit": _edit,
        "select_alternative": _select_alternative,
        "delete": _delete,
        "delete_message": _delete_message,
        "select_opening": _select_opening,
        "cancel": _cancel,
        "auto_reply": _auto_reply,
        "group.trigger": GroupFrames._group_trigger,
        "group.member": GroupFrames._group_member,
    }

    async def dispatch(self, message):
        # Stream events touch no database: skip Channels' per-message connection cleanup,
        # which would otherwise queue every delta behind the database thread.
        if message["type"] == hub.STREAM_EVENT:
            if not hub.is_own(message):  # our own were delivered by the hub already
                await self.send(hub.encode(message["event"]))
            return
        await super().dispatch(message)


def _limited_begin(who: tuple, conversation, client_id: str, content: str, **options):
    """A turn's start in the database thread, after its bursts (per player and per address,
    ``console.ratelimit``; the quotas are the plan's) are counted: one thread hop, and no
    Redis round trip on the event loop."""
    ratelimit.chat_turn(*who)
    return turns.begin_and_load(conversation, client_id, content, **options)
