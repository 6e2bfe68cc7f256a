"""A group's members through their services: add, change, move, remove; refusals write
nothing."""

from __future__ import annotations

import pytest

from roleplay.groups import services
from roleplay.groups.errors import GroupRefused, MemberExists, MemberNotFound
from roleplay.groups.selectors import is_group, members_of
from roleplay.models import Character, ConversationMember
from roleplay.services.rows import FieldErrors
from roleplay.turns import _probe as turn_probe

pytestmark = pytest.mark.django_db


def names(conversation):
    return [m.character.name for m in members_of(conversation)]


def grouped(conversation) -> bool:
    """``is_group``, checked equal to what the turn's first statement reads of it."""
    assert turn_probe(conversation) == (False, is_group(conversation))
    return is_group(conversation)


def test_a_conversation_is_a_group_of_one_until_members_join(conversation, jon, ada):
    assert names(conversation) == ["Mira"] and not grouped(conversation)
    services.update_member(conversation, conversation.character_id, muted=True)  # its own row
    assert not grouped(conversation)
    services.add_member(conversation, jon, talkativeness=0.9)
    services.add_member(conversation, ada, muted=True)
    assert names(conversation) == ["Mira", "Jon", "Ada"] and grouped(conversation)
    members = members_of(conversation)
    assert [m.position for m in members] == [0, 1, 2]
    assert members[1].talkativeness == 0.9 and members[2].muted


def test_the_conversation_character_stays_first_and_cannot_leave_or_move(group):
    first = group.character_id
    member = services.update_member(group, first, muted=True, talkativeness=0.1)
    assert member.position == 0 and member.muted and member.talkativeness == 0.1
    assert names(group) == ["Mira", "Jon", "Ada"]  # a row for its settings, still first
    with pytest.raises(GroupRefused) as refused:
        services.remove_member(group, first)
    assert refused.value.code == "member_fixed"
    with pytest.raises(GroupRefused):
        services.update_member(group, first, position=2)


def test_members_move_and_leave(group, jon, ada):
    services.update_member(group, ada.pk, position=1)
    assert names(group) == ["Mira", "Ada", "Jon"]
    with pytest.raises(GroupRefused):
        services.update_member(group, jon.pk, position=0)
    services.remove_member(group, ada.pk)
    assert names(group) == ["Mira", "Jon"]
    with pytest.raises(MemberNotFound):
        services.remove_member(group, ada.pk)


def test_refusals_change_nothing(group, jon, tenant, other_tenant):
    before = list(ConversationMember.objects.values_list("character_id", "position", "muted"))
    with pytest.raises(MemberExists):
        services.add_member(group, jon)
    with pytest.raises(MemberExists):
        services.add_member(group, group.character)
    foreign = Character.objects.create(tenant=other_tenant, name="Spy")
    with pytest.raises(FieldErrors):
        services.add_member(group, foreign)
    with pytest.raises(FieldErrors):
        services.update_member(group, jon.pk, talkativeness=2.0)
    with pytest.raises(FieldErrors):
        services.update_member(group, jon.pk, name="x")
    with pytest.raises(MemberNotFound):
        services.update_member(group, "not-a-member", muted=True)
    after = list(ConversationMember.objects.values_list("character_id", "position", "muted"))
    assert before == after


def test_a_group_is_full_at_its_limit(conversation, tenant):
    for i in range(services.MAX_MEMBERS - 1):
        services.add_member(conversation, Character.objects.create(tenant=tenant, name=f"C{i}"))
    with pytest.raises(GroupRefused) as refused:
        services.add_member(conversation, Character.objects.create(tenant=tenant, name="last"))
    assert refused.value.code == "group_full"
