"""The front tool loop in real turns (``roleplay.frontloop.plugin``): a scenario with a
``preActorDirector`` runs each chat turn through the controller model, against the scripted
OpenAI-compatible server; the reply is one message made of the Actor's segments."""

from __future__ import annotations

import json

import pytest

from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelCall, ModelConfig, Turn
from roleplay.presets.services import create_preset
from roleplay.prompting.default_preset import default_prompt_data
from roleplay.scenarios.services import create_scenario
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db(transaction=True)

CONTROLLER_MODEL = "controller-model"


@pytest.fixture
def looped(tenant, conversation, model_config, llm):
    """The conversation runs a scenario whose controller is a config of its own."""
    ModelConfig.objects.create(
        tenant=tenant,
        name="controller",
        provider="openai_compatible",
        model=CONTROLLER_MODEL,
        base_url=llm.base_url,
        context_limit=4096,
        max_output_tokens=128,
        timeout_ms=5000,
    )
    director = {"modelConfigId": "controller", "skills": ["narrate"]}
    scenario = create_scenario(
        tenant, name="Looped", model_config=model_config, preActorDirector=director
    )
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    return conversation


def call(name: str, **arguments) -> Reply:
    return Reply(tool_calls=[{"name": name, "arguments": arguments}])


def run(api, conversation, text: str, key: str):
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": key, "content": text},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def last_turn(conversation) -> Turn:
    return Turn.objects.filter(conversation=conversation).order_by("-started_at").first()


def reply_message(api, conversation) -> dict:
    rows = api.get(f"/api/v1/conversations/{conversation.pk}/messages").json()["results"]
    return [m for m in rows if m["role"] == "assistant"][-1]


def test_the_controller_runs_the_actor_then_ends_the_turn(api, looped, llm):
    llm.enqueue(
        call("actor"),
        Reply(content="Mira hands the guard the key.", chunks=3),
        call("over"),
    )
    run(api, looped, "Mira, hand the guard the key.", "k-1")
    turn = last_turn(looped)
    assert turn.status == "complete"
    message = reply_message(api, looped)
    assert message["content"] == "Mira hands the guard the key."
    [segment] = message["metadata"]["segments"]
    assert segment["text"] == "Mira hands the guard the key."
    assert segment["response_mode"] == "complete" and segment["usage"]["output_tokens"] > 0
    loop = turn.trace["front_loop"]
    assert loop["ending"] == "over" and loop["steps"] == 2 and loop["segments"] == 1
    purposes = sorted(ModelCall.objects.filter(turn=turn).values_list("purpose", flat=True))
    assert purposes == ["actor", "front_controller", "front_controller"]
    controller_calls = [r for r in llm.requests if r["model"] == CONTROLLER_MODEL]
    assert len(controller_calls) == 2
    first = controller_calls[0]
    assert [t["function"]["name"] for t in first["tools"]] == ["actor", "over"]
    assert "Mira" in first["messages"][0]["content"]  # the role prompt names the character
    assert first["messages"][-1] == {"role": "user", "content": "Mira, hand the guard the key."}
    # The second call reads the receipt of the Actor step before choosing.
    receipt = json.loads(controller_calls[1]["messages"][-1]["content"])
    assert receipt["segment"] == 0 and receipt["tokens_left"] < 256


def test_two_segments_are_one_message_and_the_second_goes_on_from_the_first(api, looped, llm):
    llm.enqueue(
        call("actor"),
        Reply(content="The guard takes the key."),
        call("actor", responseMode="visual_beat"),
        Reply(content="He turns it in the lock."),
        call("over"),
    )
    run(api, looped, "Go on.", "k-2")
    message = reply_message(api, looped)
    assert message["content"] == "The guard takes the key.\n\nHe turns it in the lock."
    modes = [s["response_mode"] for s in message["metadata"]["segments"]]
    assert modes == ["complete", "visual_beat"]
    actor_calls = [r for r in llm.requests if r["model"] == "scripted-model"]
    second = actor_calls[1]["messages"]
    assert {"role": "assistant", "content": "The guard takes the key."} in second
    # The shared budget: the second segment was asked for what the first left.
    assert actor_calls[1]["max_tokens"] < actor_calls[0]["max_tokens"] == 256


def test_a_controller_that_fails_before_any_segment_falls_back_to_direct_generation(
    api, looped, llm
):
    llm.enqueue(
        Reply(status=400, error_body={"error": {"message": "bad tools"}}),
        Reply(content="Directly written."),
    )
    run(api, looped, "Hello?", "k-3")
    turn = last_turn(looped)
    assert turn.status == "complete"
    assert reply_message(api, looped)["content"] == "Directly written."
    loop = turn.trace["front_loop"]
    assert loop["ending"] == "direct_generation"
    assert any(entry.get("event") == "direct_generation" for entry in loop["log"])


def test_steps_used_up_after_two_segments_keep_the_two(api, looped, llm):
    script = [call("actor"), Reply(content="One."), call("actor"), Reply(content="Two.")]
    for _ in range(10):  # ten more Actor steps, each answered empty: failure receipts
        script += [call("actor"), Reply(content="")]
    llm.enqueue(*script)
    run(api, looped, "Tell me.", "k-4")
    turn = last_turn(looped)
    assert turn.status == "complete"
    assert reply_message(api, looped)["content"] == "One.\n\nTwo."
    loop = turn.trace["front_loop"]
    assert loop["ending"] == "finish" and loop["steps"] == 12 and loop["segments"] == 2


def test_an_illegal_request_after_a_segment_ends_the_loop_with_what_exists(api, looped, llm):
    llm.enqueue(call("actor"), Reply(content="Kept."), call("generate_image"))
    run(api, looped, "Show me.", "k-5")
    turn = last_turn(looped)
    assert reply_message(api, looped)["content"] == "Kept."
    loop = turn.trace["front_loop"]
    assert loop["ending"] == "finish"
    assert any("rejected" in entry for entry in loop["log"])


def test_the_next_turn_reads_the_stored_reply_and_a_regenerate_runs_the_loop_again(
    api, looped, llm
):
    llm.enqueue(call("actor"), Reply(content="First reply."), call("over"))
    run(api, looped, "One.", "k-6")
    llm.enqueue(call("actor"), Reply(content="Second reply."), call("over"))
    run(api, looped, "Two.", "k-7")
    actor_calls = [r for r in llm.requests if r["model"] == "scripted-model"]
    history = [m["content"] for m in actor_calls[-1]["messages"]]
    assert "First reply." in history
    llm.enqueue(call("actor"), Reply(content="Another take."), call("over"))
    response = api.post(
        f"/api/v1/conversations/{looped.pk}/turns/run",
        {"client_message_id": "k-8", "kind": "regenerate"},
        format="json",
    )
    assert response.status_code == 201, response.content
    reply = response.json()["reply"]
    turn = last_turn(looped)
    assert turn.kind == "regenerate" and turn.trace["front_loop"]["ending"] == "over"
    assert reply["content"] == "Another take."


def test_the_controller_config_must_hold_the_front_controller_role_prompt(
    api, tenant, model_config
):
    prompts = [p for p in default_prompt_data() if p.get("name") != "front_controller"]
    bare = create_preset(tenant, name="bare", prompts=prompts)
    model_config.preset = bare
    model_config.save()
    body = {
        "name": "Needs a controller prompt",
        "model_config": str(model_config.pk),
        "preActorDirector": {"modelConfigId": str(model_config.pk), "skills": [{"name": "x"}]},
    }
    response = api.post("/api/v1/scenarios/", body, format="json")
    details = assert_error(response, 422, "validation_error")["details"]
    assert details["field"] == "preActorDirector.modelConfigId"
    assert details["role"] == "front_controller"
