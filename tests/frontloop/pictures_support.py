"""What the front loop's picture tests share: a scenario whose controller may ask for
pictures, a turn run through the REST API, waiting for a slot's end, the usual script."""

from __future__ import annotations

import time

from images.models import ImageSlot
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelConfig
from roleplay.scenarios.services import create_scenario
from tests.images.conftest import make_config

BLOCK = '<image_prompt camera="medium" aspect="1:1">Mira gives the guard a brass key</image_prompt>'
SKILL = {"name": "illustrate", "afterActorTools": ["generate_image"]}


def call(name: str, **arguments) -> Reply:
    return Reply(tool_calls=[{"name": name, "arguments": arguments}])


def picture_scenario(tenant, conversation, model_config, server, *, image_config=True):
    ModelConfig.objects.create(
        tenant=tenant, name="controller", provider="openai_compatible",
        model="controller-model", base_url=server.base_url, context_limit=4096,
        max_output_tokens=128, timeout_ms=5000,
    )  # fmt: skip
    config = make_config(tenant, server, name="pictures") if image_config else None
    scenario = create_scenario(
        tenant, name="Pictured", model_config=model_config, image_config=config,
        preActorDirector={"modelConfigId": "controller", "skills": [SKILL]},
    )  # fmt: skip
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    return conversation


def run(api, conversation, text: str, key: str) -> dict:
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": key, "content": text},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def final(message_id, timeout: float = 60.0) -> ImageSlot:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        slot = ImageSlot.objects.filter(message_id=message_id).first()
        if slot is not None and slot.status != "pending":
            return slot
        time.sleep(0.1)
    raise AssertionError("the slot never ended")


def script(llm, producer: Reply | None = None) -> None:
    llm.enqueue(
        call("actor"),
        Reply(content="Mira hands the guard the key."),
        call("generate_image"),
        call("over"),
        producer or Reply(content=BLOCK),
    )
