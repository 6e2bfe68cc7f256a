"""A DIO backend held in memory for the turn's tests: a real implementation of the
``DioBackend`` port (``roleplay.dio.engine.ports``) whose prompts the test sets, installed in
the ``dio`` plug-in for the test's duration."""

from __future__ import annotations

import asyncio
from contextlib import contextmanager
from dataclasses import dataclass, field

from roleplay.dio import plugin as dio_plugin
from roleplay.dio.engine.ports import (
    ActivePrompt,
    DioError,
    Identity,
    Receipt,
    ScheduleRequest,
    TaskStatus,
    dio_conversation_id,
    request_id,
    task_message_id,
)
from roleplay.dio.engine.slots import sha256_of
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelConfig
from roleplay.scenarios.services import create_scenario
from roleplay.turns import PLUGINS

CONTROLLER_MODEL = "controller-model"


@dataclass
class MemoryBackend:
    """Active prompts by identity, the submissions in order; ``failure`` raised by the next
    lookups, ``delay_s`` before each answer."""

    prompts: dict[Identity, ActivePrompt] = field(default_factory=dict)
    submitted: list[ScheduleRequest] = field(default_factory=list)
    lookups: list[Identity] = field(default_factory=list)
    failure: Exception | None = None
    delay_s: float = 0.0
    configs: list[dict] = field(default_factory=list)
    announces: bool = False  # a service elsewhere: the turn announces, and asks each turn
    read_with_turn: bool = False

    def put(self, identity: Identity, text: str, *, version: int = 1, sha: str | None = None):
        self.prompts[identity] = ActivePrompt(
            version=version,
            version_id=f"v{version}",
            compiled_prompt=text,
            sha256=sha256_of(text) if sha is None else sha,
        )

    async def schedule(self, request: ScheduleRequest) -> Receipt:
        if any(r.turn_id == request.turn_id for r in self.submitted):
            raise DioError("dio_duplicate", "this request was submitted already")
        self.submitted.append(request)
        return Receipt(
            dio_conversation_id(request.identity.conversation_id),
            request_id(request.turn_id),
            task_message_id(request.turn_id),
        )

    async def task(self, request_id: str) -> TaskStatus | None:
        return None

    async def active_prompt(self, identity: Identity) -> ActivePrompt | None:
        self.lookups.append(identity)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.failure is not None:
            raise self.failure
        return self.prompts.get(identity)


@contextmanager
def installed(backend: MemoryBackend):
    """The ``dio`` plug-in with ``backend`` for every scenario whose DIO is on."""

    def backends(config: dict, tenant_id=None):
        backend.configs.append(config)
        return backend

    PLUGINS.register(dio_plugin.DioPlugin(backends=backends))
    try:
        yield backend
    finally:
        PLUGINS.register(dio_plugin.PLUGIN)


def dio_scenario(tenant, conversation, model_config, llm, *, dio=None, **fields):
    """The conversation runs a scenario with the front loop and DIO (internal, compiled by
    the Actor's own config unless ``dio`` says otherwise)."""
    ModelConfig.objects.get_or_create(
        tenant=tenant,
        name="controller",
        defaults={
            "provider": "openai_compatible",
            "model": CONTROLLER_MODEL,
            "base_url": llm.base_url,
            "context_limit": 4096,
            "max_output_tokens": 128,
            "timeout_ms": 5000,
        },
    )
    scenario = create_scenario(
        tenant,
        name="With DIO",
        model_config=model_config,
        preActorDirector={"modelConfigId": "controller", "skills": ["narrate"]},
        dio=dio if dio is not None else {"mode": "internal", "modelConfigId": "scripted"},
        **fields,
    )
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])
    return scenario


def call(name: str, **arguments) -> Reply:
    return Reply(tool_calls=[{"name": name, "arguments": arguments}])


def run(api, conversation, text: str, key: str) -> dict:
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": key, "content": text},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def actor_requests(llm) -> list[dict]:
    return [r for r in llm.requests if r["model"] == "scripted-model"]
