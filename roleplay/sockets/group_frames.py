"""The chat socket's group frames (docs/groups.md): force-talk (``group.trigger`` and the
``/trigger Name`` command), a member's mute and talkativeness (``group.member``), and
auto-mode after a reply (``group_chain``). Mixed into ``ConversationConsumer``."""

from __future__ import annotations

import uuid

from console.db import run_db
from roleplay.groups import services as groups
from roleplay.groups.selectors import member_json, members_of
from roleplay.models import GroupMode, TurnKind
from roleplay.turns import TurnContext, hub

from . import group_chain

MAX_SPEAKER = 200
TRIGGER = "/trigger"


def members_event(conversation) -> dict:
    """``group.updated``: the group as it is now, for every socket on the conversation."""
    return {"type": "group.updated", "members": [member_json(m) for m in members_of(conversation)]}


class GroupFrames:
    """Group frames of the chat socket (the consumer provides ``_start``, ``_error``,
    ``_client_id`` and ``_change_all``)."""

    async def _group_trigger(self, data: dict) -> None:
        """``group.trigger {character?, client_message_id?}``: force-talk; the member
        ``character`` names (id or name) speaks now, else the group's rule picks one."""
        client_id = data.get("client_message_id")
        if client_id is None:
            client_id = f"trigger:{uuid.uuid4()}"
        elif (client_id := await self._client_id(data)) is None:
            return
        speaker = await self._speaker(data, "character")
        if speaker is not False:
            group_chain.stop(self.conversation.id)
            await self._trigger_turn(client_id, speaker)

    async def _trigger_turn(self, client_id: str, speaker: str | None) -> None:
        await self._follow(await self._start(client_id, TurnKind.GROUP, speaker=speaker))

    async def _speaker(self, data: dict, key: str) -> str | None | bool:
        """The member a frame names (None: nobody), or False after an error event."""
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not 0 < len(value.strip()) <= MAX_SPEAKER:
            await self._error("invalid_message", f"{key} must be a member's id or name")
            return False
        return value.strip()

    async def _follow(self, started) -> None:
        """Auto-mode after a reply to the player or a force-talk (``group_chain``): only
        for a group whose settings, as the turn read them, ask for it."""
        if started is None:
            return
        turn, generating, ctx = started
        if not isinstance(ctx, TurnContext) or ctx.group is None:
            return
        conversation = ctx.conversation
        if conversation.auto_turns and conversation.group_mode != GroupMode.MANUAL:
            group_chain.follow(self.conversation, turn, generating)

    async def _group_member(self, data: dict) -> None:
        """``group.member {character, muted?, talkativeness?}``: change a member; every
        socket gets ``group.updated``."""
        character = await self._speaker(data, "character")
        if not character:
            if character is None:
                await self._error("invalid_message", "character must be a member's id")
            return
        fields = {k: data[k] for k in ("muted", "talkativeness") if k in data}
        muted, talk = fields.get("muted", False), fields.get("talkativeness", 0.5)
        if (
            not fields
            or not isinstance(muted, bool)
            or isinstance(talk, bool)
            or not (isinstance(talk, int | float) and 0 <= talk <= 1)
        ):
            await self._error(
                "invalid_message", "send muted (true or false) or talkativeness (0 to 1)"
            )
            return
        if await self._change_all(groups.update_member, character, **fields) is not None:
            event = await run_db(members_event, self.conversation)
            await hub.announce(self.conversation.id, event)
