"""The chat turn's one-statement memory read (``memory.turn_reads.turn_memory``) equals the
ORM reads it replaces: the settings in force (``config_for``), the selectable entries
(``selectable_items``), whether accepted handoffs reach the character (``received``) and
whether the conversation has held document changes pending."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from console.models import Player
from memory.configs import services as config_writes
from memory.configs.selectors import config_for
from memory.documents import proposals
from memory.entries.selectors import selectable_items
from memory.entries.services import add_entry
from memory.handoffs import services as handoffs
from memory.handoffs.selectors import received
from memory.models import MemoryProposal, ProposalStatus
from memory.turn_reads import turn_memory
from roleplay.models import Character, Conversation

pytestmark = pytest.mark.django_db


def _pending(tenant, session_id) -> bool:
    return MemoryProposal.objects.filter(
        tenant=tenant, session_id=session_id, status=ProposalStatus.PENDING
    ).exists()


def assert_same(tenant, player, character, conversation):
    fast = turn_memory(tenant.pk, player.pk, str(character.pk), conversation.session_id)
    assert fast.config == config_for(tenant, str(character.pk))
    slow = selectable_items(tenant, player.pk)
    assert sorted(fast.items, key=lambda i: i.id) == sorted(slow, key=lambda i: i.id)
    found = received(
        tenant, player.pk, session_id=conversation.session_id, character_id=str(character.pk)
    )
    assert fast.has_handoffs == bool(found)
    assert fast.has_pending == _pending(tenant, conversation.session_id)


def test_an_empty_owner(tenant, player, character, conversation):
    assert_same(tenant, player, character, conversation)
    fast = turn_memory(tenant.pk, player.pk, str(character.pk), conversation.session_id)
    assert fast.items == [] and not fast.has_handoffs and not fast.has_pending


def test_a_full_owner(tenant, other_tenant, player, character, conversation):
    other = Character.objects.create(tenant=tenant, name="Juno", description="A pilot.")
    someone = Player.objects.create(tenant=tenant, external_id="p-2", display_name="Bo")
    config_writes.put_settings(tenant, {"max_selected": 3, "document_tools": True})
    config_writes.put_settings(
        tenant, {"max_selected": 2, "max_entries": 20}, character_id=str(character.pk)
    )
    config_writes.put_settings(tenant, {"enabled": False}, character_id=str(other.pk))
    soon = timezone.now() + timedelta(days=1)
    shared = add_entry(
        tenant, player, kind="preference", scope="shared", content="Keep replies short.",
        category_key="length", tags=["style", "短"], pinned=True,
    )  # fmt: skip
    add_entry(
        tenant, player, kind="agreement", scope="session", content="We meet at noon.",
        session_id=conversation.session_id, share_in_session=True, expires_at=soon,
    )  # fmt: skip
    add_entry(
        tenant, player, kind="preference", scope="persona", content="Call me Cap.",
        character_id=str(character.pk), category_key="name",
    )  # fmt: skip
    add_entry(tenant, player, kind="fact", scope="shared", content="Has a dog.")  # not selectable
    add_entry(
        tenant, player, kind="preference", scope="shared", content="Candidate.",
        status="candidate", category_key="tone",
    )  # fmt: skip
    add_entry(tenant, someone, kind="preference", scope="shared", content="Not this owner.")
    add_entry(other_tenant, None, kind="preference", scope="shared", content="Elsewhere.")
    assert_same(tenant, player, character, conversation)

    handoff = handoffs.create_handoff(
        tenant, player, from_character_id=str(other.pk), to_character_id=str(character.pk),
        session_id=conversation.session_id, summary="We found the key.",
        memory_ids=[str(shared.pk)],
    )  # fmt: skip
    assert_same(tenant, player, character, conversation)  # pending: not shown yet
    handoffs.accept_handoff(
        tenant, handoff, character_id=str(character.pk), session_id=conversation.session_id
    )
    assert_same(tenant, player, character, conversation)
    assert_same(tenant, player, other, conversation)  # to another character: none

    gate = proposals.Gate(uuid.uuid4(), uuid.uuid4())
    proposals.propose(tenant, conversation.session_id, "default", gate, 0, {"k": 1})
    assert_same(tenant, player, character, conversation)
    elsewhere = Conversation.objects.create(tenant=tenant, player=player, character=character)
    assert_same(tenant, player, character, elsewhere)
    proposals.settle(tenant, conversation.session_id)  # the reply is missing: dropped
    assert_same(tenant, player, character, conversation)
