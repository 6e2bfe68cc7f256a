"""Handoffs between personas (seed 004) against the real database and over REST: what may
be referenced (checked again on read), accept bound to the receiver and idempotent, close by
version, the cap with recycling, deletion revoking a reference, and the receiving persona's
prompt at the scripted model server."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memory.entries.services import add_entry, delete_entry, update_entry
from memory.errors import MemoryConflict, MemoryInvalid
from memory.handoffs import selectors, services
from memory.models import MemoryHandoff
from roleplay.models import Character, Conversation, Turn
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver(tenant):
    return Character.objects.create(tenant=tenant, name="Mira", description="A scout.")


def _shared(tenant, player, content="Keep replies short.", **fields):
    return add_entry(tenant, player, kind="preference", scope="shared", content=content, **fields)


def _create(tenant, player, conversation, character, receiver, **fields):
    fields.setdefault("summary", "We found the key under the bridge.")
    fields.setdefault("memory_ids", [])
    return services.create_handoff(
        tenant,
        player,
        from_character_id=str(character.pk),
        to_character_id=str(receiver.pk),
        session_id=conversation.session_id,
        **fields,
    )


def test_only_shareable_entries_and_the_check_again_on_read(
    tenant, player, character, conversation, receiver
):
    shared = _shared(tenant, player)
    session = add_entry(
        tenant, player, kind="context", scope="session", content="At the gate.",
        session_id=conversation.session_id, share_in_session=True,
    )  # fmt: skip
    private = add_entry(
        tenant, player, kind="preference", scope="persona", content="Call me Cap.",
        character_id=str(character.pk),
    )  # fmt: skip
    with pytest.raises(MemoryInvalid) as refused:
        _create(tenant, player, conversation, character, receiver, memory_ids=[str(private.pk)])
    assert refused.value.code == "memory_not_shareable"
    handoff = _create(
        tenant, player, conversation, character, receiver,
        memory_ids=[str(shared.pk), str(session.pk)], summary="mail ann@example.com later",
    )  # fmt: skip
    assert "ann@example.com" not in handoff.summary
    assert selectors.shared_entries(handoff) == [shared, session]
    update_entry(tenant, session, session.version, share_in_session=False)  # made private
    delete_entry(tenant, shared, shared.version)  # deleting revokes the reference
    handoff = MemoryHandoff.objects.get(pk=handoff.pk)
    assert selectors.shared_entries(handoff) == [] and handoff.items.count() == 1


def test_accept_is_bound_and_idempotent_close_names_the_version(
    tenant, player, character, conversation, receiver
):
    handoff = _create(tenant, player, conversation, character, receiver)
    who = {"character_id": str(receiver.pk), "session_id": conversation.session_id}
    with pytest.raises(MemoryConflict) as refused:
        services.accept_handoff(
            tenant, handoff, character_id=str(character.pk), session_id=conversation.session_id
        )
    assert refused.value.code == "handoff_not_yours"
    accepted = services.accept_handoff(tenant, handoff, **who)
    again = services.accept_handoff(tenant, accepted, **who)
    assert (accepted.status, accepted.version) == (again.status, again.version) == ("accepted", 2)
    with pytest.raises(MemoryConflict) as stale:
        services.close_handoff(tenant, again, 1, **who)
    assert stale.value.code == "version_conflict"
    closed = services.close_handoff(tenant, again, 2, **who)
    assert (closed.status, closed.version) == ("closed", 3)
    for action in (lambda: services.accept_handoff(tenant, closed, **who),
                   lambda: services.close_handoff(tenant, closed, 3, **who)):  # fmt: skip
        with pytest.raises(MemoryConflict) as late:
            action()
        assert late.value.code == "invalid_state"


@override_settings(MEMORY_MAX_HANDOFFS=2)
def test_the_cap_recycles_closed_handoffs_first(tenant, player, character, conversation, receiver):
    who = {"character_id": str(receiver.pk), "session_id": conversation.session_id}
    first = _create(tenant, player, conversation, character, receiver)
    _create(tenant, player, conversation, character, receiver)
    with pytest.raises(MemoryConflict) as full:
        _create(tenant, player, conversation, character, receiver)
    assert full.value.code == "handoffs_full"
    services.close_handoff(tenant, first, 1, **who)
    _create(tenant, player, conversation, character, receiver)
    assert not MemoryHandoff.objects.filter(pk=first.pk).exists()
    assert MemoryHandoff.objects.filter(player=player).count() == 2


def test_rest_and_the_receiving_personas_prompt(
    api, tenant, player, character, conversation, receiver, llm
):
    shared = _shared(tenant, player, content="Keep replies short.")
    base = f"/api/v1/players/{player.pk}/memory/handoffs/"
    body = {
        "from_character": str(character.pk),
        "to_character": str(receiver.pk),
        "conversation": str(conversation.pk),
        "summary": "We found the key under the bridge.",
        "memory_ids": [str(shared.pk)],
    }
    created = api.post(base, body, format="json")
    assert created.status_code == 201, created.content
    handoff = created.json()
    assert (handoff["status"], handoff["memory_ids"]) == ("pending", [str(shared.pk)])
    assert_error(api.post(base, {**body, "extra": 1}, format="json"), 400, "validation_error")
    assert_error(
        api.post(base, {**body, "to_character": str(character.pk)}, format="json"),
        422,
        "handoff_to_itself",
    )
    listed = api.get(base, {"character": str(receiver.pk)}).json()["results"]
    assert [h["id"] for h in listed] == [handoff["id"]]

    who = {"character": str(receiver.pk), "conversation": str(conversation.pk)}
    url = f"{base}{handoff['id']}/"
    assert_error(
        api.post(f"{url}accept/", {**who, "character": str(character.pk)}, format="json"),
        409,
        "handoff_not_yours",
    )
    accepted = api.post(f"{url}accept/", who, format="json")
    assert accepted.status_code == 200 and accepted.json()["status"] == "accepted"

    # The receiving persona, in that conversation, reads the handoff in its prompt.
    theirs = Conversation.objects.create(tenant=tenant, player=player, character=receiver)
    MemoryHandoff.objects.filter(pk=handoff["id"]).update(session_id=theirs.session_id)
    res = api.post(
        f"/api/v1/conversations/{theirs.pk}/turns/run",
        {"client_message_id": "m1", "content": "What did we find?"},
        format="json",
    )
    assert res.status_code == 201, res.content
    sent = "\n".join(m["content"] for m in llm.requests[-1]["messages"])
    assert "We found the key under the bridge." in sent and "Keep replies short." in sent
    assert "not something you lived through" in sent
    trace = Turn.objects.get(conversation=theirs).trace
    assert trace["memory_handoffs"]["ids"] == [handoff["id"]]

    closed = api.post(
        f"{url}close/", {**who, "conversation": str(theirs.pk), "version": 2}, format="json"
    )
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    assert_error(api.get(f"{base}not-a-uuid/accept/"), 405, "method_not_allowed")


def test_the_limits_hold_for_what_is_stored(tenant, player, conversation, character, receiver):
    # Short addresses become longer placeholders: the stored summary must still fit.
    summary = " ".join(["a@b.co"] * 285)  # 1,994 characters as written
    with pytest.raises(MemoryInvalid) as refused:
        _create(tenant, player, conversation, character, receiver, summary=summary)
    assert refused.value.code == "invalid_summary"
    assert refused.value.details["stored_chars"] > 2000
    # A persona id is an id, never text that could carry an address past the scrubber.
    with pytest.raises(MemoryInvalid) as refused:
        services.create_handoff(
            tenant, player, from_character_id="ann@example.com", to_character_id=str(receiver.pk),
            session_id=conversation.session_id, summary="Hello.", memory_ids=[],
        )  # fmt: skip
    assert (refused.value.code, refused.value.details["field"]) == (
        "invalid_persona",
        "from_character",
    )
    assert not MemoryHandoff.objects.exists()
