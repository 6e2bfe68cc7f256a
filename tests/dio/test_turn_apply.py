"""DIO in real turns (``roleplay.dio.plugin``), against the scripted model server: the
active prompt read before the Actor goes into the preset's ``roleplay`` slot; a failed or
tampered lookup degrades to the normal prompt; a preset without a slot fails the turn; DIO
off reads nothing."""

from __future__ import annotations

import asyncio

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from roleplay.dio import plugin as dio_plugin
from roleplay.dio.engine.ports import DioError
from roleplay.dio.identity import identity_for
from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn
from roleplay.presets.services import create_preset
from roleplay.prompting.default_preset import default_prompt_data
from roleplay.turns import PLUGINS, begin_turn, load_context
from roleplay.turns.phases import run_stage
from tests.dio.turn_support import MemoryBackend, actor_requests, call, dio_scenario, installed, run

pytestmark = pytest.mark.django_db(transaction=True)

COMPILED = "You are Mira. You answer in short sentences and use no metaphors."
DESCRIPTION = "A lighthouse keeper."


@pytest.fixture
def backend():
    with installed(MemoryBackend()) as found:
        yield found


@pytest.fixture
def with_dio(tenant, conversation, model_config, llm):
    dio_scenario(tenant, conversation, model_config, llm)
    return conversation


def one_turn(api, conversation, llm, text: str, key: str, reply: str = "Short. Yes.") -> dict:
    llm.enqueue(call("actor"), Reply(content=reply), call("over"))
    return run(api, conversation, text, key)


def test_the_next_turn_has_the_compiled_prompt_in_the_roleplay_slot(api, with_dio, llm, backend):
    one_turn(api, with_dio, llm, "From now on answer in short sentences.", "a-1", "All right.")
    first = actor_requests(llm)[-1]["messages"]
    assert any(DESCRIPTION in m["content"] for m in first)  # no active prompt yet
    backend.put(identity_for(with_dio), COMPILED, version=2)
    one_turn(api, with_dio, llm, "What is at the gate?", "a-2")
    messages = actor_requests(llm)[-1]["messages"]
    contents = [m["content"] for m in messages]
    [slot] = [m for m in messages if COMPILED in m["content"]]
    # The system prompts are one message: the control text (main), then the slot's
    # content, replaced whole.
    assert slot["role"] == "system" and slot["content"].endswith("\n\n" + COMPILED)
    assert slot["content"].index("Stay in character") < slot["content"].index(COMPILED)
    assert not any(DESCRIPTION in c for c in contents)
    assert contents.index(slot["content"]) < contents.index("All right.")  # order kept
    assert "From now on answer in short sentences." in contents  # the history kept
    assert (messages[-1]["role"], messages[-1]["content"]) == ("user", "What is at the gate?")
    turn = Turn.objects.order_by("-started_at").first()
    assert turn.status == "complete"
    dio = turn.trace["dio"]
    assert dio["status"] == "applied" and dio["version"] == 2
    assert dio["slot"] == {"identifier": "roleplay", "kind": "roleplay"}
    assert [p["outcome"] for p in turn.trace["phases"] if p["name"] == "dio"] == ["ok"]
    assert backend.lookups[-1] == identity_for(with_dio)
    assert backend.configs[-1]["mode"] == "internal"


def test_a_hash_mismatch_degrades_to_the_normal_prompt(api, with_dio, llm, backend):
    backend.put(identity_for(with_dio), COMPILED, sha="0" * 64)
    one_turn(api, with_dio, llm, "Hello.", "h-1")
    contents = [m["content"] for m in actor_requests(llm)[-1]["messages"]]
    assert not any(COMPILED in c for c in contents)
    assert any(DESCRIPTION in c for c in contents)
    turn = Turn.objects.order_by("-started_at").first()
    assert turn.status == "complete"
    assert turn.trace["dio"]["status"] == "degraded"
    assert turn.trace["dio"]["degraded"]["code"] == "dio_hash_mismatch"


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (DioError("dio_unavailable", "connection refused"), "dio_unavailable"),
        (RuntimeError("backend bug"), "dio_unavailable"),
        ("slow", "dio_timeout"),
    ],
)
def test_a_failed_lookup_degrades_to_the_normal_prompt(
    api, tenant, conversation, model_config, llm, backend, failure, code
):
    dio = {"mode": "internal", "modelConfigId": "scripted", "timeoutMs": 100}
    dio_scenario(tenant, conversation, model_config, llm, dio=dio)
    backend.put(identity_for(conversation), COMPILED)
    if failure == "slow":
        backend.delay_s = 3.0
    else:
        backend.failure = failure
    one_turn(api, conversation, llm, "Hello.", "f-1", "Normal reply.")
    contents = [m["content"] for m in actor_requests(llm)[-1]["messages"]]
    assert any(DESCRIPTION in c for c in contents) and not any(COMPILED in c for c in contents)
    turn = Turn.objects.order_by("-started_at").first()
    assert turn.status == "complete" and turn.trace["dio"]["degraded"]["code"] == code


def test_no_active_prompt_yet_is_the_normal_prompt_without_degradation(api, with_dio, llm, backend):
    one_turn(api, with_dio, llm, "Hello.", "n-1")
    turn = Turn.objects.order_by("-started_at").first()
    assert turn.trace["dio"]["status"] == "none" and "degraded" not in turn.trace["dio"]


def test_a_preset_without_a_slot_fails_the_turn_with_the_rule_s_code(
    api, tenant, with_dio, model_config, llm, backend
):
    # The scenario was saved with a preset that has the slot; the Actor's config then
    # changed to one without (a save cannot see every config a conversation may use).
    prompts = [
        {**p, "name": "Character"} if p.get("name") == "roleplay" else p
        for p in default_prompt_data()
    ]
    model_config.preset = create_preset(tenant, name="no slot", prompts=prompts)
    model_config.save()
    backend.put(identity_for(with_dio), COMPILED)
    llm.enqueue(call("actor"), Reply(content="never"), call("over"))
    body = run(api, with_dio, "Hello.", "s-1")
    turn = Turn.objects.get(pk=body["turn"]["id"])
    assert turn.status == "failed" and turn.error_code == "dio_slot_missing"
    assert turn.trace["dio"]["status"] == "slot_error"
    assert not actor_requests(llm)  # the Actor was never asked


def test_the_cancel_propagates_from_the_lookup(tenant, conversation, model_config, llm, backend):
    dio_scenario(tenant, conversation, model_config, llm)
    backend.put(identity_for(conversation), COMPILED)
    backend.delay_s = 2.0
    start = begin_turn(conversation, "c-1", "Hello.")
    ctx = load_context(start.turn, "Hello.")

    async def cancelled_midway():
        cancel = asyncio.Event()

        async def emit(event):
            if event["type"] == "phase.started" and event["phase"] == "dio":
                asyncio.get_running_loop().call_later(0.05, cancel.set)

        with PLUGINS.using([PLUGINS.get("dio")]):
            await run_stage("pre_actor", ctx, emit, cancel)

    from roleplay.llm.errors import ModelCancelled

    with pytest.raises(ModelCancelled):
        asyncio.run(cancelled_midway())
    assert [p["outcome"] for p in ctx.trace["phases"]] == ["cancelled"]
    assert COMPILED not in str(ctx.preset.prompts)


def _queries(conversation, key: str, plugins) -> tuple[int, dict]:
    """The queries of one turn's load and pre-Actor stage with only ``plugins``."""
    start = begin_turn(conversation, key, "Hello.")

    async def stage(ctx):
        async def emit(event):
            return None

        await run_stage("pre_actor", ctx, emit, asyncio.Event())

    with PLUGINS.using(plugins), CaptureQueriesContext(connection) as captured:
        ctx = load_context(start.turn, "Hello.")
        asyncio.run(stage(ctx))
    start.turn.delete()
    return len(captured.captured_queries), ctx.trace


@pytest.mark.parametrize("dio", [None, {"mode": "off"}])
def test_dio_off_reads_nothing_and_asks_no_backend(
    tenant, conversation, model_config, llm, backend, dio
):
    dio_scenario(tenant, conversation, model_config, llm, dio={"mode": "off"})
    conversation.scenario.dio = dio
    conversation.scenario.save(update_fields=["dio"])
    installed = PLUGINS.get("dio")
    assert installed is not dio_plugin.PLUGIN  # the test's backend would be asked
    off, trace = _queries(conversation, "q-1", [installed])
    without, _ = _queries(conversation, "q-2", [])
    assert off == without
    assert "dio" not in trace and not [p for p in trace.get("phases", []) if p["name"] == "dio"]
    assert backend.configs == [] and backend.lookups == []
