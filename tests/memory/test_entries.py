"""Memory entries against the real database: supersede by category (race-free), caps with
recycling, compare-and-set on ``version``, candidates, scrubbing, and owners kept apart."""

from __future__ import annotations

from collections import Counter

import pytest
from django.test import override_settings

from console.models import Player
from memory.entries import services
from memory.entries.selectors import owner_entries
from memory.errors import MemoryConflict, MemoryInvalid, MemoryNotFound
from memory.models import MemoryEntry
from tests.races import race


@pytest.fixture
def owner(tenant):
    return Player.objects.create(tenant=tenant, external_id="owner")


def _add(tenant, player, content="be brief", **fields):
    fields.setdefault("kind", "preference")
    fields.setdefault("scope", "shared")
    return services.add_entry(tenant, player, content=content, **fields)


def _statuses(tenant, player):
    return sorted(owner_entries(tenant, player).values_list("content", "status"))


@pytest.mark.django_db
def test_a_newer_preference_of_a_category_supersedes_the_older(tenant, owner):
    old = _add(tenant, owner, "call me Sam", category_key="name")
    new = _add(tenant, owner, "call me Samuel", category_key="name")
    assert new.supersedes_id == old.pk
    assert _statuses(tenant, owner) == [("call me Sam", "superseded"), ("call me Samuel", "active")]
    # Another scope, character or conversation is another slot; no category never supersedes.
    _add(tenant, owner, "call me S", category_key="name", scope="persona", character_id="c1")
    _add(tenant, owner, "be brief")
    _add(tenant, owner, "be warm")
    assert Counter(s for _, s in _statuses(tenant, owner)) == {"active": 4, "superseded": 1}


@pytest.mark.django_db
def test_scrubbing_limits_and_field_rules(tenant, owner):
    entry = _add(tenant, owner, "mail me at alice@example.com")
    assert entry.content == "mail me at [redacted:email]"
    for fields, code in [
        ({"content": "x" * 241}, "content_too_long"),
        ({"content": "   "}, "invalid_content"),
        ({"content": "a\x00b"}, "invalid_text"),
        ({"kind": "gossip"}, "invalid_kind"),
        ({"scope": "global"}, "invalid_scope"),
        ({"kind": "agreement"}, "agreement_not_shared"),
        ({"scope": "persona"}, "scope_needs_character"),
        ({"scope": "session"}, "scope_needs_conversation"),
        ({"category_key": "Bad Key"}, "invalid_category"),
        ({"tags": ["ok", ""]}, "invalid_tags"),
        ({"status": "superseded"}, "invalid_status"),
    ]:
        with pytest.raises(MemoryInvalid) as info:
            _add(tenant, owner, **fields)
        assert info.value.code == code
    assert _add(tenant, owner, "y" * 4000, kind="episode").kind == "episode"
    assert MemoryEntry.objects.count() == 2


@pytest.mark.django_db
@override_settings(MEMORY_MAX_ENTRIES=3)
def test_a_full_owner_recycles_spare_entries_else_refuses(tenant, owner):
    spare = _add(tenant, owner, "maybe brief", status="candidate")
    _add(tenant, owner, "one")
    _add(tenant, owner, "two")
    _add(tenant, owner, "three")  # recycles the candidate
    assert not MemoryEntry.objects.filter(pk=spare.pk).exists()
    with pytest.raises(MemoryConflict) as info:
        _add(tenant, owner, "four")
    assert info.value.code == "memory_full"
    assert MemoryEntry.objects.filter(player=owner).count() == 3


@pytest.mark.django_db
def test_changes_name_the_current_version(tenant, owner):
    entry = _add(tenant, owner, "be brief", status="candidate", category_key="length")
    with pytest.raises(MemoryConflict) as info:
        services.accept(tenant, entry, 2)
    assert info.value.code == "version_conflict" and info.value.details["current_version"] == 1
    accepted = services.accept(tenant, entry, 1)
    assert (accepted.status, accepted.version) == ("active", 2)
    with pytest.raises(MemoryConflict) as info:
        services.reject(tenant, accepted, 2)
    assert info.value.code == "invalid_state"
    pinned = services.set_pinned(tenant, accepted, 2, True)
    changed = services.update_entry(tenant, pinned, 3, content="be very brief", tags=["style"])
    assert (changed.content, changed.tags, changed.pinned, changed.version) == (
        "be very brief",
        ["style"],
        True,
        4,
    )
    with pytest.raises(MemoryInvalid):
        services.update_entry(tenant, changed, True, content="x")
    with pytest.raises(MemoryConflict):
        services.delete_entry(tenant, changed, 3)
    services.delete_entry(tenant, changed, 4)
    with pytest.raises(MemoryNotFound):
        services.delete_entry(tenant, changed, 4)


@pytest.mark.django_db
def test_accepting_a_candidate_supersedes_the_active_one(tenant, owner):
    active = _add(tenant, owner, "call me Sam", category_key="name")
    candidate = _add(tenant, owner, "call me Sammy", category_key="name", status="candidate")
    services.accept(tenant, candidate, 1)
    assert _statuses(tenant, owner) == [("call me Sam", "superseded"), ("call me Sammy", "active")]
    assert MemoryEntry.objects.get(pk=candidate.pk).supersedes_id == active.pk


@pytest.mark.django_db
def test_owners_and_tenants_are_apart(tenant, other_tenant, owner):
    other = Player.objects.create(tenant=tenant, external_id="other")
    stranger = Player.objects.create(tenant=other_tenant, external_id="owner")
    _add(tenant, owner, "mine", category_key="name")
    _add(tenant, other, "theirs", category_key="name")
    _add(other_tenant, stranger, "foreign", category_key="name")
    assert [e.content for e in owner_entries(tenant, owner)] == ["mine"]
    assert MemoryEntry.objects.filter(status="active").count() == 3


@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_adds_of_one_category_leave_one_active(tenant, owner):
    def add(i, _n):
        return _add(tenant, owner, f"call me {i}", category_key="name").pk

    race(list(range(10)), add)
    statuses = Counter(owner_entries(tenant, owner).values_list("status", flat=True))
    assert statuses == {"active": 1, "superseded": 9}


@pytest.mark.django_db(transaction=True)
def test_an_edit_and_an_accept_racing_on_one_version_make_one_winner(tenant, owner):
    candidate = _add(tenant, owner, "be terse", category_key="length", status="candidate")

    def act(which, _n):
        try:
            if which == "edit":
                services.update_entry(tenant, candidate, 1, content="be very terse")
            else:
                services.accept(tenant, candidate, 1)
        except MemoryConflict as exc:
            return exc.code
        return "won"

    outcomes = race(["edit", "accept"], act)
    assert sorted(outcomes) == ["version_conflict", "won"]
    entry = MemoryEntry.objects.get(pk=candidate.pk)
    assert entry.version == 2
    # Exactly one of the two changes happened, never both, never a mix.
    assert (entry.status, entry.content) in {
        ("active", "be terse"),
        ("candidate", "be very terse"),
    }
