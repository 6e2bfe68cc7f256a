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


AUTO_REPLY = "Suggest lines for the player of {{getvar::characterName}} in {{getvar::language}}."


@pytest.fixture
def auto_config(tenant, model_config):
    """The ``agenticV2.modelConfigs.autoReply`` config: its own temperature and a preset
    whose ``auto_reply`` prompt is recognisable."""
    from roleplay.models import ModelConfig, Preset
    from roleplay.prompting.default_preset import default_prompt_data

    prompts = [
        dict(p, content=AUTO_REPLY) if p["name"] == "auto_reply" else p
        for p in default_prompt_data()
    ]
    preset = Preset.objects.create(tenant=tenant, name="suggestions", prompts=prompts)
    return ModelConfig.objects.create(
        tenant=tenant,
        name="suggester",
        provider="openai_compatible",
        model="scripted-model",
        base_url=model_config.base_url,
        context_limit=4096,
        max_output_tokens=256,
        timeout_ms=5000,
        temperature=0.3,
        preset=preset,
    )


def agentic(model_config, auto_config=None) -> dict:
    configs = {"actor": str(model_config.pk), "orchestrator": str(model_config.pk)}
    if auto_config is not None:
        configs["autoReply"] = str(auto_config.pk)
    return {"enabled": True, "modelConfigs": configs, "enabledTools": []}


@pytest.fixture
def story_world(tenant, conversation, model_config, auto_config):
    scenario = Scenario.objects.create(
        tenant=tenant,
        name="story",
        model_config=model_config,
        story_v1={"enabled": True, "modelConfigId": str(model_config.pk)},
        agentic_v2=agentic(model_config, auto_config),
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


def test_the_auto_reply_config_its_prompt_and_temperature_are_used(
    api, story_world, llm, auto_config
):
    """Story's suggestions go to ``agenticV2.modelConfigs.autoReply`` with its preset's
    ``auto_reply`` prompt as the system prompt, at that config's temperature (Story does not
    set one), and the character's description is part of the material."""
    conversation, said = story_world
    llm.enqueue(Reply(content=json.dumps(GOOD)))
    response = _ask(api, conversation, said[-1].pk, language="French")
    assert response.status_code == 200, response.json()
    sent = llm.requests[-1]
    assert sent["messages"][0]["content"] == "Suggest lines for the player of Mira in French."
    assert sent["temperature"] == 0.3
    assert "A lighthouse keeper." in sent["messages"][1]["content"]
    call = ModelCall.objects.get(purpose="auto_reply")
    assert call.config_id == auto_config.pk


def test_a_story_without_an_auto_reply_config_is_refused(api, story_world, llm, model_config):
    conversation, said = story_world
    Scenario.objects.filter(pk=conversation.scenario_id).update(agentic_v2=agentic(model_config))
    assert_error(_ask(api, conversation, said[-1].pk), 422, "auto_reply_not_configured")
    Scenario.objects.filter(pk=conversation.scenario_id).update(agentic_v2=None)
    assert_error(_ask(api, conversation, said[-1].pk), 422, "auto_reply_not_configured")
    assert not llm.requests


def test_a_content_filtered_answer_ends_the_attempts_at_once(api, story_world, llm):
    conversation, said = story_world
    llm.enqueue(*[Reply(content="", finish_reason="content_filter")] * 3)
    error = assert_error(_ask(api, conversation, said[-1].pk), 502, "auto_reply_generation_failed")
    assert error["details"]["problems"] == ["model_content_filtered"]
    assert ModelCall.objects.filter(purpose="auto_reply").count() == 1
