"""The two halves talking to each other: the external adapter (``dio.external``) drives our
own DIO's protocol endpoints served by a daphne child process on the same database, over
real HTTP with a real API token, while our compile runs against the scripted model server.
Also the internal backend through the same protocol methods, and ``backend_for``."""

from __future__ import annotations

import asyncio
import json

import pytest

from console.services import create_api_token
from roleplay.dio import compiling, external, selectors
from roleplay.dio.backends import backend_for
from roleplay.dio.engine.compiler import sha256
from roleplay.dio.engine.ports import DioError, ScheduleRequest
from roleplay.dio.external import ExternalBackend, ExternalConfig
from roleplay.dio.identity import identity_for
from roleplay.dio.internal import InternalBackend
from roleplay.dio.models import DioTask
from roleplay.llm.scripted_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

ENV = "RP_TEST_DIO_SERVICE_TOKEN"
SHORT = "From now on, Mira answers in short sentences."
UNREACHABLE = "http://127.0.0.1:9"


@pytest.fixture
def service_token(tenant, monkeypatch):
    _token, raw = create_api_token(tenant, "dio-service", ["play"])
    monkeypatch.setenv(ENV, raw)
    return raw


def _compile(llm, request_id: str, text: str) -> None:
    llm.enqueue(Reply(content=json.dumps({"compiledPrompt": text, "changeset": []})))
    compiling.run(str(DioTask.objects.get(request_id=request_id).pk))


def test_the_adapter_and_our_endpoints_speak_the_same_protocol(
    daphne_child, conversation, llm, service_token, model_config
):
    config = {"mode": "external", "serviceUrl": daphne_child.url, "apiKeyEnv": ENV,
              "timeoutMs": 5000}  # fmt: skip
    backend = backend_for(config)
    assert isinstance(backend, ExternalBackend)
    backend.follow = False  # this test polls itself (``poll_once`` below)
    identity = identity_for(conversation)
    receipt = asyncio.run(backend.schedule(ScheduleRequest(identity, "turn-1", SHORT, "en")))
    assert receipt.as_json() == {
        "accepted": True,
        "dioConversationId": f"dio_{conversation.pk}",
        "requestId": "turn-1:dio",
        "taskMessageId": "turn-1:dio:assistant",
        "appliesFrom": "next_turn",
    }
    task = DioTask.objects.get(request_id="turn-1:dio")  # written by the other process
    assert task.instruction == SHORT and task.tenant_id == conversation.tenant_id
    assert asyncio.run(backend.task("turn-1:dio")).status == "processing"
    assert asyncio.run(backend.active_prompt(identity)) is None  # a 404: none yet
    with pytest.raises(DioError) as caught:
        asyncio.run(backend.schedule(ScheduleRequest(identity, "turn-1", "again")))
    assert caught.value.code == "dio_duplicate"

    _compile(llm, "turn-1:dio", "Mira, a lighthouse keeper. Short sentences.")
    status = asyncio.run(backend.task("turn-1:dio"))
    assert status.status == "succeeded" and status.prompt_changed is True
    active = asyncio.run(backend.active_prompt(identity))
    assert active.compiled_prompt == "Mira, a lighthouse keeper. Short sentences."
    assert active.sha256 == sha256(active.compiled_prompt) == status.compiled_prompt_sha256
    ended = external.poll_once(config, "turn-1:dio", list(_args(identity)), deadline=1e12)
    assert ended == "succeeded"
    assert asyncio.run(backend.task("nobody:dio")) is None


def _args(identity):
    return identity.user_id, identity.conversation_id, identity.target_prompt_id


def test_the_adapter_reports_an_unusable_service_as_unavailable(
    daphne_child, conversation, monkeypatch, service_token
):
    identity = identity_for(conversation)
    request = ScheduleRequest(identity, "turn-2", SHORT)
    for config in (
        ExternalConfig(UNREACHABLE, ENV, 2000),
        ExternalConfig(daphne_child.url, "RP_TEST_DIO_NO_SUCH_VARIABLE", 5000),  # no token: 401
        ExternalConfig(daphne_child.url + "/nothing-here", ENV, 5000),  # 404 on /v1/chat
    ):
        with pytest.raises(DioError) as caught:
            asyncio.run(ExternalBackend(config, follow=False).schedule(request))
        assert caught.value.code == "dio_unavailable", config
    assert not DioTask.objects.exists()


def test_the_internal_backend_speaks_the_protocol_too(conversation, llm, model_config):
    backend = backend_for({"mode": "internal", "modelConfigId": model_config.name},
                          tenant_id=conversation.tenant_id)  # fmt: skip
    assert isinstance(backend, InternalBackend)
    identity = identity_for(conversation)
    receipt = asyncio.run(backend.schedule(ScheduleRequest(identity, "turn-3", SHORT)))
    assert receipt.request_id == "turn-3:dio" and receipt.dio_conversation_id.startswith("dio_")
    with pytest.raises(DioError) as caught:  # a second schedule_dio of one turn
        asyncio.run(backend.schedule(ScheduleRequest(identity, "turn-3", SHORT)))
    assert caught.value.code == "dio_duplicate"
    assert DioTask.objects.get().model_config_ref == model_config.name
    _compile(llm, "turn-3:dio", "Terse Mira.")
    assert asyncio.run(backend.task("turn-3:dio")).status == "succeeded"
    assert asyncio.run(backend.active_prompt(identity)).compiled_prompt == "Terse Mira."
    foreign = InternalBackend(tenant_id=conversation.tenant_id.__class__(int=1))
    assert asyncio.run(foreign.active_prompt(identity)) is None
    assert asyncio.run(foreign.task("turn-3:dio")) is None


@pytest.mark.parametrize(
    "config",
    [
        {"mode": "sometimes"},
        {"mode": "external"},
        {"mode": "external", "serviceUrl": "ftp://x"},
        {"mode": "external", "serviceUrl": "http://x", "apiKeyEnv": "sk-abc"},
        {"mode": "external", "serviceUrl": "http://x", "timeoutMs": 99},
        {"mode": "external", "serviceUrl": "http://x", "timeoutMs": 600_001},
        {"mode": "internal", "modelConfigId": 5},
    ],
)
def test_backend_for_refuses_an_unusable_config(config):
    with pytest.raises(DioError) as caught:
        backend_for(config)
    assert caught.value.code == "dio_config_invalid"


def test_backend_for_off_is_none_and_the_timeout_limits_are_inclusive():
    assert backend_for(None) is None and backend_for({"mode": "off"}) is None
    for ms in (100, 600_000):
        backend = backend_for({"mode": "external", "serviceUrl": "http://x/", "timeoutMs": ms})
        assert backend.config.timeout_ms == ms and backend.config.service_url == "http://x"


def test_a_worker_compiles_what_the_api_accepted(celery_worker, api, conversation, llm):
    """Through real Celery: the submission queues ``roleplay.dio_compile`` on commit and a
    worker process compiles it against the scripted model server."""
    import time

    llm.enqueue(Reply(content=json.dumps({"compiledPrompt": "Terse Mira.", "changeset": []})))
    url = f"/api/v1/conversations/{conversation.pk}/dio/"
    response = api.post(url, {"instruction": SHORT, "requestId": "w-1:dio"}, format="json")
    assert response.status_code == 202, response.content
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        task = DioTask.objects.get(request_id="w-1:dio")
        if task.status != "processing":
            break
        time.sleep(0.1)
    assert (task.status, task.prompt_changed) == ("succeeded", True), task.error_message
    identity = identity_for(conversation)
    assert selectors.active_prompt(None, identity).compiled_prompt == "Terse Mira."
