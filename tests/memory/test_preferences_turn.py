"""A chat turn carries the player's stated preferences to the Actor (one placed block, at
most 5 entries and 600 characters) and never stores them in the transcript."""

from __future__ import annotations

import pytest

from memory.engine.preferences import HEADING
from memory.entries.services import add_entry
from memory.models import MemoryEntry, Message
from roleplay.models import Conversation, Turn

pytestmark = pytest.mark.django_db(transaction=True)


def _actor_text(llm) -> str:
    return "\n".join(m["content"] for m in llm.requests[-1]["messages"])


def test_the_actor_reads_the_chosen_preferences_and_the_transcript_does_not(
    api, tenant, player, character, conversation, llm
):
    def add(content, **fields):
        fields.setdefault("kind", "preference")
        fields.setdefault("scope", "shared")
        return add_entry(tenant, player, content=content, **fields)

    shared = add("Keep replies short.")
    persona = add(
        "Call me Captain.", kind="agreement", scope="persona", character_id=str(character.pk)
    )
    add("Never seen: a candidate.", status="candidate")
    add("Never seen: an episode.", kind="episode")
    other = Conversation.objects.create(tenant=tenant, player=player, character=character)
    add("Never seen: another conversation.", scope="session", session_id=other.session_id)
    add("Never seen: another character.", scope="persona", character_id="someone-else")

    res = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": "m1", "content": "Hello there."},
        format="json",
    )
    assert res.status_code == 201, res.content
    sent = _actor_text(llm)
    assert HEADING in sent and "Keep replies short." in sent and "Call me Captain." in sent
    assert "Never seen" not in sent
    stored = " ".join(Message.objects.filter(tenant=tenant).values_list("content", flat=True))
    assert HEADING not in stored and "Keep replies short." not in stored
    trace = Turn.objects.get(conversation=conversation).trace["memory"]
    assert [(p["id"], p["level"]) for p in trace["preferences"]] == [
        (str(persona.pk), "persona"),
        (str(shared.pk), "shared"),
    ]
    used = MemoryEntry.objects.exclude(last_used_at=None).values_list("pk", flat=True)
    assert set(used) == {shared.pk, persona.pk}


def test_no_preferences_no_block(api, conversation, llm):
    res = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": "m1", "content": "Hello there."},
        format="json",
    )
    assert res.status_code == 201
    assert HEADING not in _actor_text(llm)
    assert "memory" not in Turn.objects.get(conversation=conversation).trace


def test_tags_the_turn_names_rank_an_entry_first(api, tenant, player, character, conversation, llm):
    from memory.configs.services import put_settings
    from memory.engine.preferences import turn_tags

    put_settings(tenant, {"max_selected": 1})
    character.tags = ["Sailing"]
    character.save(update_fields=["tags"])
    tagged = add_entry(tenant, player, kind="preference", scope="shared",
                       content="Describe the weather at sea.", tags=["sailing"])  # fmt: skip
    poems = add_entry(tenant, player, kind="preference", scope="shared",
                      content="Quote a poem now and then.", tags=["poetry"])  # fmt: skip
    add_entry(tenant, player, kind="preference", scope="shared", content="Newest, untagged.")

    def turn(client_id, text):
        res = api.post(
            f"/api/v1/conversations/{conversation.pk}/turns/run",
            {"client_message_id": client_id, "content": text},
            format="json",
        )
        assert res.status_code == 201, res.content
        return Turn.objects.get(pk=res.json()["turn"]["id"]).trace["memory"]["preferences"]

    # The character's tags count, whatever their case.
    assert turn("t1", "Hello.") == [{"id": str(tagged.pk), "level": "shared",
                                     "reasons": ["shared", "tags:1"]}]  # fmt: skip
    assert "Describe the weather at sea." in _actor_text(llm)
    # A tag the player's message names outranks the character's and the newer entry.
    character.tags = []
    character.save(update_fields=["tags"])
    assert [p["id"] for p in turn("t2", "Any POETRY tonight?")] == [str(poems.pk)]
    assert turn_tags(["poetry", "sea", "猫"], text="我的猫 and the seaside", character_tags=()) == (
        "猫",
    )
