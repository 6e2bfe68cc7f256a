"""Preferences the player states in a chat message are learned before the reply, so the
Actor reads them in that very turn and the next; the model's reply never teaches anything."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.engine.preferences import HEADING
from memory.models import MemoryEntry
from roleplay.llm.scripted_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def _turn(api, conversation, client_id, content):
    res = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": client_id, "content": content},
        format="json",
    )
    assert res.status_code == 201, res.content
    return res.json()


def test_a_stated_preference_is_learned_and_read_at_once(api, conversation, llm):
    llm.enqueue(Reply(content="Aye. Call me Bob, and keep it short yourself."))
    _turn(api, conversation, "m1", "简洁一点。Also, from now on, call me Sam.")
    entries = {e.category_key: e for e in MemoryEntry.objects.all()}
    assert set(entries) == {"length", "address"}
    brief, name = entries["length"], entries["address"]
    assert (brief.scope, brief.origin, brief.session_id) == (
        "session",
        "rule",
        conversation.session_id,
    )
    assert brief.character_id == str(conversation.character_id)
    assert (
        timezone.now() + timedelta(hours=23)
        < brief.expires_at
        < timezone.now() + timedelta(days=1, minutes=1)
    )
    assert (name.scope, name.expires_at, name.session_id) == ("persona", None, "")
    assert "Sam" in name.content and "Bob" not in name.content

    _turn(api, conversation, "m2", "What now?")
    assert len(llm.requests) == 2
    for request in llm.requests:  # the turn that stated them, and the next one
        sent = "\n".join(m["content"] for m in request["messages"])
        assert HEADING in sent and brief.content in sent and name.content in sent


def test_conditionals_and_examples_teach_nothing(api, conversation, llm):
    _turn(
        api,
        conversation,
        "m1",
        "If you were brief, would you call me Sam? For example, 'be brief'.",
    )
    assert MemoryEntry.objects.count() == 0


def test_a_preference_learned_at_the_cap_is_refused_and_the_turn_completes(
    api, tenant, player, conversation, llm
):
    from memory.configs.services import put_settings
    from memory.entries.services import add_entry
    from roleplay.models import Turn

    put_settings(tenant, {"max_entries": 10})
    for n in range(10):
        add_entry(tenant, player, kind="fact", scope="shared", content=f"Fact {n}.")
    llm.enqueue(Reply(content="Very well."))
    answer = _turn(api, conversation, "m1", "From now on, call me Sam.")
    assert answer["turn"]["status"] == "complete"
    assert answer["reply"]["content"] == "Very well."
    assert MemoryEntry.objects.filter(player=player).count() == 10  # nothing learned
    rules = Turn.objects.get(pk=answer["turn"]["id"]).trace["memory_rules"]
    assert rules == [{"category_key": "address", "refused": "memory_full",
                      "message": rules[0]["message"]}]  # fmt: skip
    assert "10 entries" in rules[0]["message"]
