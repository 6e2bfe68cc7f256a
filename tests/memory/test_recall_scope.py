"""What recall may hand a conversation of the player's entries (seed 004): a ``session``
entry stays in its conversation, an expired entry is never selected, and at the cap an
expired entry frees its slot like any spare one."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from memory import packs
from memory.entries.services import add_entry
from memory.models import MemoryEntry
from memory.recall import search
from roleplay.models import Conversation
from tests.memory.test_recall import _conversation

pytestmark = pytest.mark.django_db(transaction=True)


def _fact(tenant, player, content, **fields):
    fields.setdefault("kind", "fact")
    fields.setdefault("scope", "shared")
    return add_entry(tenant, player, content=content, **fields)


def _seed(tenant, player, character):
    here = _conversation(tenant, player, character)
    elsewhere = Conversation.objects.create(tenant=tenant, player=player, character=character)
    ours = {"scope": "session", "character_id": str(character.pk)}
    _fact(tenant, player, "The copper key opens the harbour gate.",
          session_id=elsewhere.session_id, **ours)  # fmt: skip
    _fact(tenant, player, "The copper key is heavy.", session_id=here.session_id, **ours)
    _fact(tenant, player, "The copper key was a gift.",
          expires_at=timezone.now() - timedelta(minutes=1))  # fmt: skip
    _fact(tenant, player, "The copper key is old.")
    return here, elsewhere


def _entry_texts(items) -> list[str]:
    return sorted(item["text"] for item in items if item["kind"] == "entry")


def test_a_pack_carries_neither_another_conversations_session_entries_nor_expired_ones(
    tenant, player, character
):
    here, _elsewhere = _seed(tenant, player, character)
    owner = packs.Owner(str(tenant.pk), str(player.pk), str(character.pk), str(here.pk))
    items = packs.compute(owner, "Where is the copper key?")
    assert _entry_texts(items) == ["The copper key is heavy.", "The copper key is old."]


def test_a_recall_for_a_conversation_keeps_session_entries_in_it(api, tenant, player, character):
    here, elsewhere = _seed(tenant, player, character)

    def recall(conversation):
        body = {"query": "copper key", "kinds": ["entry"], "conversation": str(conversation.pk)}
        response = api.post(f"/api/v1/players/{player.pk}/memory/recall", body, format="json")
        assert response.status_code == 200, response.content
        return _entry_texts(response.json()["items"])

    assert recall(here) == ["The copper key is heavy.", "The copper key is old."]
    assert recall(elsewhere) == ["The copper key is old.", "The copper key opens the harbour gate."]
    everything = search.recall(tenant, player, search.RecallQuery("copper key", kinds=["entry"]))
    assert "The copper key was a gift." not in _entry_texts(everything["items"])


@override_settings(MEMORY_MAX_ENTRIES=3)
def test_an_expired_entry_frees_its_slot_at_the_cap(tenant, player):
    gone = _fact(tenant, player, "Wants short replies today.", kind="preference",
                 expires_at=timezone.now() - timedelta(seconds=1))  # fmt: skip
    _fact(tenant, player, "one")
    _fact(tenant, player, "two")
    _fact(tenant, player, "three")  # the expired entry is recycled, not a memory_full
    assert not MemoryEntry.objects.filter(pk=gone.pk).exists()
    assert MemoryEntry.objects.filter(player=player).count() == 3


@override_settings(MEMORY_MAX_ENTRIES=3)
def test_a_pinned_expired_entry_is_marked_expired_and_kept(tenant, player):
    kept = _fact(tenant, player, "Pinned and past.", pinned=True,
                 expires_at=timezone.now() - timedelta(seconds=1))  # fmt: skip
    spare = _fact(tenant, player, "maybe", status="candidate")
    _fact(tenant, player, "one")
    _fact(tenant, player, "two")  # recycles the candidate: pinned is never recycled
    assert not MemoryEntry.objects.filter(pk=spare.pk).exists()
    kept.refresh_from_db()
    assert (kept.status, kept.version) == ("expired", 2)
