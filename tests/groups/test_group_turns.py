"""A group's turns against the scripted model: who speaks, what the speaker's prompt holds,
and what the reply keeps of its speaker."""

from __future__ import annotations

import pytest

from memory.models import Message
from roleplay import turns
from roleplay.groups.errors import GroupRefused, MemberNotFound
from roleplay.models import Turn
from roleplay.turns.context import actor_prompt

pytestmark = pytest.mark.django_db(transaction=True)


def text_of(prompt) -> str:
    return "\n".join(str(m["content"]) for m in prompt.messages)


def speakers(conversation) -> list[str]:
    rows = Message.objects.filter(session_id=conversation.session_id, role="assistant")
    return [m.metadata["speaker"]["name"] for m in rows.order_by("ts")]


def test_list_mode_goes_round_the_group_and_each_reply_keeps_its_speaker(group, llm):
    group.group_mode = "list"
    group.save()
    for i in range(4):
        turn = turns.run_to_end(group, f"c{i}", f"Hello {i}")
        assert turn.status == "complete"
    assert speakers(group) == ["Mira", "Jon", "Ada", "Mira"]
    last = Turn.objects.get(client_message_id="c3")
    assert last.speaker_id == group.character_id and last.trace["speaker"]["name"] == "Mira"


def test_the_speakers_prompt_has_its_card_the_others_and_their_names(group, jon, llm):
    group.group_mode = "list"
    group.save()
    turns.run_to_end(group, "c1", "Hello, lighthouse.")  # Mira answers
    start, ctx = turns.begin_and_load(group, "c2", "And you, Jon?", speaker="Jon")
    assert ctx.speaker == jon and ctx.group is not None
    prompt = text_of(actor_prompt(ctx))
    assert "A fisherman with a loud laugh." in prompt  # Jon's own card
    assert "A lighthouse keeper." not in prompt.split("[Other characters")[0]
    assert (
        "[Other characters in this conversation]\n- Mira: A lighthouse keeper.\n- Ada: A mapmaker."
        in prompt
    )
    assert "- Ada: A mapmaker.\n[Write the next reply only as Jon.]" in prompt
    assert "Mira: Hello from the scripted model." in prompt  # another member's reply, named
    assert ctx.message_metadata["speaker"] == {"id": str(jon.pk), "name": "Jon"}
    event = turns.started_event(start, "c2", ctx)
    assert event["speaker"] == {"id": str(jon.pk), "name": "Jon"}
    Turn.objects.filter(pk=start.turn.pk).update(status="failed")


def test_join_cards_puts_every_card_in_the_prompt_without_the_members_block(group, llm):
    group.join_cards = True
    group.save()
    start, ctx = turns.begin_and_load(group, "c1", "Hi all", speaker="Ada")
    prompt = text_of(actor_prompt(ctx))
    assert "Mira: A lighthouse keeper." in prompt and "Ada: A mapmaker." in prompt
    assert "Jon: A fisherman" in prompt and "[Other characters" not in prompt
    assert "[Write the next reply only as Ada.]" in prompt
    Turn.objects.filter(pk=start.turn.pk).update(status="failed")


def test_a_regenerate_keeps_the_replys_speaker(group, llm):
    turns.run_to_end(group, "c1", "Hi", speaker="Ada")
    turn = turns.run_to_end(group, "r1", kind="regenerate")
    assert turn.status == "complete" and turn.speaker.name == "Ada"


def test_force_talk_and_group_turns_answer_without_a_new_message(group, llm):
    turns.run_to_end(group, "c1", "Hi", speaker="Jon")
    turn = turns.run_to_end(group, "t1", kind="group", speaker="ada")
    assert turn.kind == "group" and turn.user_message_id is None
    assert speakers(group) == ["Jon", "Ada"]
    assert Message.objects.filter(session_id=group.session_id, role="user").count() == 1
    auto = turns.run_to_end(group, "t2", kind="group")  # the rule picks: not Ada again
    assert auto.speaker.name != "Ada"


def test_refusals_store_nothing(group, llm):
    group.group_mode = "manual"
    group.save()
    with pytest.raises(GroupRefused) as refused:
        turns.run_to_end(group, "c1", "Anyone?")
    assert refused.value.code == "speaker_required"
    with pytest.raises(MemberNotFound):
        turns.run_to_end(group, "c2", "Anyone?", speaker="Nobody")
    assert not Message.objects.filter(session_id=group.session_id).exists()
    assert not Turn.objects.exists()
    turn = turns.run_to_end(group, "c3", "Jon?", speaker="Jon")  # the player picks
    assert turn.speaker.name == "Jon"


def test_muted_members_are_not_chosen(group, jon, ada, llm):
    from roleplay.groups import services

    services.update_member(group, group.character_id, muted=True)
    services.update_member(group, ada.pk, muted=True)
    for i in range(3):
        assert turns.run_to_end(group, f"c{i}", "Mira? Ada?").speaker == jon
    services.update_member(group, jon.pk, muted=True)
    with pytest.raises(GroupRefused) as refused:
        turns.run_to_end(group, "c9", "Anyone?")
    assert refused.value.code == "no_speaker"


def test_a_one_character_conversation_has_no_speaker_kept(conversation, llm):
    turn = turns.run_to_end(conversation, "c1", "Hi")
    assert turn.speaker_id is None and "speaker" not in turn.trace
    reply = Message.objects.get(pk=turn.assistant_message_id)
    assert "speaker" not in reply.metadata


def test_a_groups_chat_export_names_each_replys_speaker(api, group, jon, llm):
    import json

    from roleplay import turns

    turns.run_to_end(group, "c1", "Hi", speaker="Jon")
    turns.run_to_end(group, "c2", "And Mira?", speaker="Mira")
    response = api.get(f"/api/v1/conversations/{group.id}/export?format=sillytavern")
    lines = [json.loads(line) for line in response.content.decode().splitlines() if line]
    replies = [line["name"] for line in lines[1:] if line.get("is_user") is False]
    assert replies[-2:] == ["Jon", "Mira"]


def test_rest_auto_mode_runs_the_members_replies_after_the_first(api, group, llm):
    from roleplay.llm.scripted_server import Reply

    group.group_mode, group.auto_turns, group.auto_delay_ms = "list", 2, 60_000
    group.save()
    for text in ("Mira speaks.", "Jon speaks.", "Ada speaks.", "not asked for"):
        llm.enqueue(Reply(content=text))
    url = f"/api/v1/conversations/{group.pk}/turns/run"
    body = {"client_message_id": "a1", "content": "Who keeps the light?", "auto": True}
    first = api.post(url, body, format="json")
    assert first.status_code == 201, first.content[:400]
    data = first.json()
    assert data["reply"]["content"] == "Mira speaks."
    chain = [(t["turn"]["client_message_id"], t["reply"]["content"]) for t in data["chain"]]
    assert chain == [
        (f"auto:{data['turn']['id']}", "Jon speaks."),
        (f"auto:{data['chain'][0]['turn']['id']}", "Ada speaks."),
    ]
    assert speakers(group) == ["Mira", "Jon", "Ada"]
    again = api.post(url, body, format="json")  # a repeat walks the same chain, runs nothing
    assert again.status_code == 200 and again.json()["chain"] == data["chain"]
    assert speakers(group) == ["Mira", "Jon", "Ada"]
    plain = api.post(url, {"client_message_id": "a2", "content": "And you?"}, format="json")
    assert plain.status_code == 201 and plain.json()["chain"] == []
    assert speakers(group) == ["Mira", "Jon", "Ada", "Mira"]


def test_rest_auto_mode_in_a_one_character_chat_or_manual_group_runs_nothing_more(
    api, conversation, llm
):
    conversation.auto_turns = 3
    conversation.save()
    url = f"/api/v1/conversations/{conversation.pk}/turns/run"
    done = api.post(url, {"client_message_id": "o1", "content": "Hi", "auto": True}, format="json")
    assert done.status_code == 201 and done.json()["chain"] == []
