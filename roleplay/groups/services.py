"""Writes of a group: add, change (mute, talkativeness, position) and remove members.

A member is named by its character's id. The conversation's own character is always the
first member: it can be muted or made more or less talkative (a row keeps that), never
moved or removed (``member_fixed``); change the conversation's character for that."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max

from roleplay.errors import FieldErrors
from roleplay.models import Character, Conversation, ConversationMember
from roleplay.services import rows

from .errors import GroupRefused, MemberExists, MemberNotFound
from .selectors import GroupMember, members_of

MAX_MEMBERS = 12
MEMBER_FIELDS = ("muted", "talkativeness", "position")


def _locked(conversation: Conversation) -> None:
    """Member writes of one conversation wait for each other (positions stay dense)."""
    Conversation.objects.select_for_update(no_key=True).filter(pk=conversation.pk).exists()


@transaction.atomic
def add_member(
    conversation: Conversation,
    character: Character,
    *,
    muted: bool = False,
    talkativeness: float = 0.5,
) -> GroupMember:
    """``character`` (the tenant's own) joins the group last."""
    rows.check_same_tenant(conversation.tenant_id, character=character)
    _locked(conversation)
    current = members_of(conversation)
    if any(m.character.pk == character.pk for m in current):
        raise MemberExists(message=f"{character.name} is in this conversation already")
    if len(current) >= MAX_MEMBERS:
        raise GroupRefused("group_full", f"a group has at most {MAX_MEMBERS} members")
    last = ConversationMember.objects.filter(conversation=conversation).aggregate(Max("position"))
    row = ConversationMember(
        tenant_id=conversation.tenant_id,
        conversation=conversation,
        character=character,
        position=(last["position__max"] or 0) + 1,
        muted=muted,
        talkativeness=talkativeness,
    )
    rows.save(row)
    return _member(conversation, character.pk)


@transaction.atomic
def update_member(conversation: Conversation, character_id, **fields) -> GroupMember:
    """Change a member's ``muted``, ``talkativeness`` or ``position`` (1 is right after
    the conversation's character; the others move along)."""
    unknown = sorted(set(fields) - set(MEMBER_FIELDS))
    if unknown:
        raise FieldErrors({name: ["unknown field"] for name in unknown})
    _locked(conversation)
    member = _member(conversation, character_id)
    own = member.position == 0
    position = fields.pop("position", None)
    if position is not None and (position == 0) != own:
        raise GroupRefused(
            "member_fixed", "the conversation's character is the first member; others go from 1"
        )
    row, _ = ConversationMember.objects.get_or_create(
        conversation=conversation,
        character=member.character,
        defaults={"tenant_id": conversation.tenant_id, "position": 0},
    )
    if fields:
        rows.assign(row, fields, MEMBER_FIELDS)
        rows.save(row, changed=list(fields))
    if position is not None and not own:
        _move(conversation, member, position)
    return _member(conversation, character_id)


def _move(conversation: Conversation, member: GroupMember, position: int) -> None:
    others = [m for m in members_of(conversation)[1:] if m.character.pk != member.character.pk]
    others.insert(min(position, len(others) + 1) - 1, member)
    for index, each in enumerate(others, start=1):
        ConversationMember.objects.filter(
            conversation=conversation, character=each.character
        ).update(position=index)


@transaction.atomic
def remove_member(conversation: Conversation, character_id) -> None:
    """The member leaves; what it said stays in the history under its name."""
    _locked(conversation)
    member = _member(conversation, character_id)
    if member.position == 0:
        raise GroupRefused("member_fixed", "the conversation's character cannot leave it")
    ConversationMember.objects.filter(
        conversation=conversation, character_id=member.character.pk
    ).delete()


def _member(conversation: Conversation, character_id) -> GroupMember:
    found = next(
        (m for m in members_of(conversation) if str(m.character.pk) == str(character_id)), None
    )
    if found is None:
        raise MemberNotFound(message="no such member in this conversation")
    return found
