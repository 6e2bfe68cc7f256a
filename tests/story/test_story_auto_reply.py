"""Story auto-reply over REST (seed 002, lines 1543–1556), against the scripted server: the
stored reply and at most 6 earlier messages, never the story's state; exactly three valid
options or a corrected retry; 502 ``auto_reply_generation_failed`` after three attempts;
nothing written."""

from __future__ import annotations

import json

import pytest

from memory import services as message_store
from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelCall, Scenario
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db

GOOD = {"options": ["I ask about the crest.", "I wait at the gate.", "I take the key back."]}


@pytest.fixture
def story_world(tenant, conversation, model_config):
    scenario = Scenario.objects.create(
        tenant=tenant,
        name="story",
        model_config=model_config,
        story_v1={"enabled": True, "modelConfigId": str(model_config.pk)},
    )
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    said = []
    for n in range(5):
        for role in ("user", "assistant"):
            said.append(
                message_store.save_message(
                    tenant,
                    conversation.session_id,
                    role=role,
                    content=f"{role} line {n}",
                    kind="chat",
                )
            )
    return conversation, said


def _ask(api, conversation, message_id, language="English"):
    body = {"assistant_message_id": str(message_id), "language": language}
    return api.post(f"/api/v1/conversations/{conversation.pk}/auto-replies", body, format="json")


def test_three_options_from_the_stored_reply_and_six_earlier_messages(api, story_world, llm):
    conversation, said = story_world
    target = said[-3]  # "assistant line 3": a later exchange exists and must not be read
    Message.objects.filter(pk=target.pk).update(content="The guard asks for a writ.")
    llm.enqueue(Reply(content=json.dumps(GOOD)))
    before = Message.objects.count()
    response = _ask(api, conversation, target.pk)
    assert response.status_code == 200, response.json()
    assert response.json()["options"] == GOOD["options"]
    sent = llm.requests[-1]
    user = sent["messages"][1]["content"]
    assert "The guard asks for a writ." in user  # the stored text, not an older copy
    assert "line 4" not in user  # nothing after the target
    assert "user line 0" not in user and "user line 1" in user  # six earlier messages
    assert sent["response_format"]["json_schema"]["name"] == "story_auto_reply"
    assert "CURRENT STORY STAGE" not in json.dumps(sent)
    assert Message.objects.count() == before
    assert ModelCall.objects.filter(purpose="auto_reply").count() == 1


def test_an_invalid_answer_is_corrected_not_truncated(api, story_world, llm):
    conversation, said = story_world
    too_long = {"options": ["x" * 161, "b", "c"]}
    llm.enqueue(Reply(content=json.dumps(too_long)), Reply(content=json.dumps(GOOD)))
    response = _ask(api, conversation, said[-1].pk)
    assert response.status_code == 200 and response.json()["options"] == GOOD["options"]
    correction = llm.requests[-1]["messages"][-1]["content"]
    assert "160" in correction


@pytest.mark.parametrize(
    "answer",
    [
        {"options": ["a", "b"]},
        {"options": ["a", "A", "b"]},
        {"options": ["a", "", "b"]},
        "not json",
    ],
)
def test_three_invalid_answers_are_a_502(api, story_world, llm, answer):
    conversation, said = story_world
    body = answer if isinstance(answer, str) else json.dumps(answer)
    llm.enqueue(*[Reply(content=body)] * 3)
    response = _ask(api, conversation, said[-1].pk)
    assert_error(response, 502, "auto_reply_generation_failed")
    assert ModelCall.objects.filter(purpose="auto_reply").count() == 3


def test_the_target_must_be_an_assistant_reply_after_a_user_message(api, story_world, llm):
    conversation, said = story_world
    assert_error(_ask(api, conversation, said[0].pk), 404, "not_found")  # a user message
    opening = message_store.save_message(
        conversation.tenant, "other-session", role="assistant", content="Hi", kind="chat"
    )
    assert_error(_ask(api, conversation, opening.pk), 404, "not_found")
    assert not llm.requests
