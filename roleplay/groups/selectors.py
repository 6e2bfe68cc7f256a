"""Reads of a group: its members in speaking order, and who spoke each stored reply."""

from __future__ import annotations

from dataclasses import dataclass

from memory.models import Message
from roleplay.models import Character, Conversation, ConversationMember

from .engine import DEFAULT_TALKATIVENESS, Member

# What a member's character is read with: its card, not its avatar bytes.
_DEFERRED = ("character__avatar", "character__extensions")


@dataclass(frozen=True)
class GroupMember:
    """One member as the runtime sees it; ``position`` 0 is the conversation's character."""

    character: Character
    position: int
    muted: bool = False
    talkativeness: float = DEFAULT_TALKATIVENESS

    @property
    def rule(self) -> Member:
        """The member as the pure speaker rules take it."""
        return Member(str(self.character.pk), self.character.name, self.talkativeness, self.muted)


def has_members_sql(conversation: str, character: str) -> str:
    """Whether the conversation ``conversation`` has members besides its own character
    ``character`` (SQL expressions, each appearing once, in that order), as an SQL
    expression: false for a group of one, which :func:`members_of` need not read."""
    return f"""EXISTS (
        SELECT 1 FROM {ConversationMember._meta.db_table} m
        WHERE m.conversation_id = {conversation} AND m.character_id <> {character}
    )"""


def members_of(conversation: Conversation) -> list[GroupMember]:
    """The group in speaking order: the conversation's character first (its row, if any,
    keeps its mute and talkativeness), then the other members by position. A conversation
    without member rows is a group of one."""
    rows = list(
        ConversationMember.objects.filter(conversation_id=conversation.pk)
        .select_related("character")
        .defer(*_DEFERRED)
    )
    own = next((r for r in rows if r.character_id == conversation.character_id), None)
    first = GroupMember(
        conversation.character,
        0,
        own.muted if own else False,
        own.talkativeness if own else DEFAULT_TALKATIVENESS,
    )
    others = [
        GroupMember(r.character, i, r.muted, r.talkativeness)
        for i, r in enumerate(
            (r for r in rows if r.character_id != conversation.character_id), start=1
        )
    ]
    return [first, *others]


def member_json(member: GroupMember) -> dict:
    """A member as the REST door and the socket's ``group.updated`` show it."""
    character = member.character
    return {
        "character": str(character.pk),
        "name": character.name,
        "position": member.position,
        "muted": member.muted,
        "talkativeness": member.talkativeness,
    }


def is_group(conversation: Conversation) -> bool:
    return (
        ConversationMember.objects.filter(conversation_id=conversation.pk)
        .exclude(character_id=conversation.character_id)
        .exists()
    )


def reply_speakers(conversation: Conversation, message_ids) -> dict[str, str]:
    """Message id → the id of the character who spoke it, for the replies among
    ``message_ids`` that recorded one (``metadata.speaker``)."""
    rows = Message.objects.filter(
        tenant_id=conversation.tenant_id,
        session_id=conversation.session_id,
        pk__in=list(message_ids),
        role="assistant",
    ).values_list("pk", "metadata__speaker__id")
    return {str(pk): str(speaker) for pk, speaker in rows if speaker}


def speaker_of(conversation: Conversation, message_id) -> str | None:
    """The character id a stored reply records as its speaker, if any."""
    return reply_speakers(conversation, [message_id]).get(str(message_id))
