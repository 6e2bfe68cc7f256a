"""A scenario's memory runtime: ``external`` talks to a prepare/commit memory service (our
own, served by a daphne child process on the same database, so a real HTTP hop and a real
token), ``off`` reads and learns nothing, and the fail-closed and best-effort rules hold."""

from __future__ import annotations

import pytest

from console.services import create_api_token
from memory.entries.services import add_entry
from memory.models import MemoryClaim, MemoryEntry, Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import Conversation, Turn
from roleplay.scenarios.services import ScenarioConfigInvalid, create_scenario

pytestmark = pytest.mark.django_db(transaction=True)

ENV = "RP_TEST_MEMORY_SERVICE_TOKEN"
UNREACHABLE = "http://127.0.0.1:9"


def _scenario(tenant, model_config, conversation, url, **external):
    scenario = create_scenario(
        tenant,
        name="external-memory",
        model_config=model_config,
        memoryRuntime="external",
        externalMemory={"url": url, "apiKeyEnv": ENV, "timeoutMs": 5000, **external},
    )
    Conversation.objects.filter(pk=conversation.pk).update(scenario=scenario)
    return scenario


def _turn(api, conversation, content="Do you remember the copper key?", key="m1"):
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": key, "content": content},
        format="json",
    )
    assert response.status_code in (201, 200, 502, 503), response.content
    return Turn.objects.filter(conversation=conversation).latest("started_at")


def _actor_text(llm) -> str:
    return "\n".join(str(m.get("content")) for m in llm.requests[-1]["messages"])


@pytest.fixture
def service_token(tenant, monkeypatch):
    _token, raw = create_api_token(tenant, "memory-service", ["play"])
    monkeypatch.setenv(ENV, raw)
    return raw


def test_an_external_service_prepares_and_commits_each_turn(
    daphne_child, tenant, player, model_config, conversation, api, llm, service_token
):
    _scenario(tenant, model_config, conversation, daphne_child.url)
    add_entry(tenant, player, kind="preference", scope="shared", category_key="length",
              content="Keep replies brief.")  # fmt: skip
    turn = _turn(api, conversation)
    assert turn.status == "complete", turn.trace
    sent = _actor_text(llm)
    assert "Memory from the memory service" in sent and "Keep replies brief." in sent
    runtime = turn.trace["memory_runtime"]
    assert runtime["prepare"] == "ok" and runtime["commit"] == "ok", runtime
    assert "memory" not in turn.trace and "memory_pack" not in turn.trace  # internal: aside
    claim = MemoryClaim.objects.get(pk=runtime["claim_id"])  # written by the other process
    assert claim.status == "committed" and claim.turn == 1
    assert claim.request_id == str(turn.pk) and claim.conversation_id == conversation.pk
    # Our own turn stored the round already: the service did not add it again.
    assert Message.objects.filter(session_id=conversation.session_id).count() == 2


def test_fail_closed_fails_the_turn_before_the_actor(
    tenant, model_config, conversation, api, llm, service_token
):
    _scenario(tenant, model_config, conversation, UNREACHABLE)
    turn = _turn(api, conversation)
    assert turn.status == "failed" and turn.error_code == "memory_prepare_failed"
    assert turn.trace["memory_runtime"]["prepare"] == "failed"
    assert llm.requests == []  # the Actor never ran


def test_fail_open_goes_on_without_memory(
    tenant, model_config, conversation, api, llm, service_token
):
    _scenario(tenant, model_config, conversation, UNREACHABLE, failClosed=False)
    turn = _turn(api, conversation)
    assert turn.status == "complete"
    runtime = turn.trace["memory_runtime"]
    assert runtime["prepare"] == "failed" and runtime["error"] == "memory_service_unreachable"
    assert "Memory from the memory service" not in _actor_text(llm)


def test_a_failed_commit_is_recorded_and_the_reply_stands(
    daphne_child, tenant, model_config, conversation, api, llm, service_token
):
    _scenario(tenant, model_config, conversation, daphne_child.url)

    def actor(_request):
        from datetime import timedelta

        from django.utils import timezone

        MemoryClaim.objects.update(expires_at=timezone.now() - timedelta(1))  # meanwhile
        return Reply(content="I remember.", chunks=2)

    llm.default = Reply.from_callable(actor)
    turn = _turn(api, conversation)
    assert turn.status == "complete"
    runtime = turn.trace["memory_runtime"]
    assert runtime["commit"] == "failed" and runtime["commit_error"] == "memory_service_error"
    phases = {p["name"]: p for p in turn.trace["phases"]}
    assert phases["memory_commit"]["outcome"] == "failed"
    assert Message.objects.get(pk=turn.assistant_message_id).content == "I remember."


def test_memory_off_reads_and_learns_nothing(tenant, player, model_config, conversation, api, llm):
    scenario = create_scenario(tenant, name="no-memory", model_config=model_config,
                               memoryRuntime="off")  # fmt: skip
    Conversation.objects.filter(pk=conversation.pk).update(scenario=scenario)
    add_entry(tenant, player, kind="preference", scope="shared", content="Keep replies brief.")
    turn = _turn(api, conversation, content="From now on, please be brief.")
    assert turn.status == "complete"
    assert "Keep replies brief." not in _actor_text(llm)
    assert not MemoryEntry.objects.filter(origin="rule").exists()
    assert "memory" not in turn.trace and "memory_runtime" not in turn.trace
    assert not {p["name"] for p in turn.trace.get("phases", [])} & {"memory_prepare",
                                                                    "memory_commit"}  # fmt: skip


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"memoryRuntime": "external"}, "externalMemory"),
        ({"memoryRuntime": "elsewhere"}, "memoryRuntime"),
        ({"memoryRuntime": "external", "externalMemory": {"url": "ftp://x"}}, "externalMemory.url"),
        ({"memoryRuntime": "external",
          "externalMemory": {"url": "http://x", "timeoutMs": 100}}, "externalMemory.timeoutMs"),
        ({"memoryRuntime": "external",
          "externalMemory": {"url": "http://x", "apiKeyEnv": "sk-1"}}, "externalMemory.apiKeyEnv"),
        ({"externalMemory": {"url": "http://x", "extra": 1}}, "externalMemory.extra"),
    ],
)  # fmt: skip
def test_the_runtime_is_checked_on_save(tenant, model_config, fields, field):
    with pytest.raises(ScenarioConfigInvalid) as caught:
        create_scenario(tenant, name="bad", model_config=model_config, **fields)
    assert caught.value.details["field"] == field


def test_prepare_sends_the_rendered_system_message(api, llm, conversation):
    from roleplay.memory_plugin.external import system_message
    from roleplay.turns.context import actor_prompt, load_context

    llm.default = Reply(content="The key is on its hook.")
    turn = _turn(api, conversation, content="Where is the copper key?")
    ctx = load_context(turn)
    sent = system_message(ctx)
    messages = actor_prompt(ctx).messages
    assert messages[0]["role"] == "system" and sent == messages[0]["content"]
    assert ctx.character.name in sent and "Where is the copper key?" not in sent
    assert sent != f"{ctx.character.name}: {ctx.character.description}".strip()


async def _socket_turn(conversation, content="Do you remember the copper key?"):
    import json

    from tests.ws.test_chat_socket import connect, receive_until

    comm = await connect(conversation)
    frame = {"type": "user_message", "client_message_id": "s1", "content": content}
    await comm.send_to(text_data=json.dumps(frame))
    events = await receive_until(comm, "turn.completed", timeout=30)
    await comm.disconnect()
    return events


def _after_completed(events) -> list:
    names = [(e["type"], e.get("phase")) for e in events]
    return names[names.index(("phase.completed", "memory_commit")) :]


@pytest.mark.asyncio
async def test_turn_completed_follows_the_external_commit(
    daphne_child, tenant, model_config, conversation, llm, service_token
):
    from asgiref.sync import sync_to_async

    await sync_to_async(_scenario)(tenant, model_config, conversation, daphne_child.url)
    events = await _socket_turn(conversation)
    names = [(e["type"], e.get("phase")) for e in events]
    last_delta = max(i for i, (kind, _phase) in enumerate(names) if kind == "delta")
    assert last_delta < names.index(("phase.started", "memory_commit"))  # the reply first
    assert _after_completed(events) == [
        ("phase.completed", "memory_commit"),
        ("turn.completed", None),
    ]
    claim = await MemoryClaim.objects.aget(conversation_id=conversation.pk)
    assert claim.status == "committed"
    turn = await Turn.objects.aget(pk=events[-1]["turn_id"])
    assert turn.trace["memory_runtime"]["commit"] == "ok"
    assert [p["name"] for p in turn.trace["phases"]] == ["memory_prepare", "memory_commit"]


@pytest.mark.asyncio
async def test_a_failed_commit_is_announced_before_turn_completed(
    daphne_child, tenant, model_config, conversation, llm, service_token
):
    from asgiref.sync import sync_to_async

    await sync_to_async(_scenario)(tenant, model_config, conversation, daphne_child.url)

    def actor(_request):
        from datetime import timedelta

        from django.utils import timezone

        MemoryClaim.objects.update(expires_at=timezone.now() - timedelta(1))  # meanwhile
        return Reply(content="I remember.", chunks=2)

    llm.default = Reply.from_callable(actor)
    events = await _socket_turn(conversation)
    failed = [e for e in events if e["type"] == "memory.commit_failed"]
    assert failed == [
        {"type": "memory.commit_failed", "turn_id": events[-1]["turn_id"],
         "code": "memory_service_error"}
    ]  # fmt: skip
    assert events[-1]["type"] == "turn.completed" and events[-1]["content"] == "I remember."
