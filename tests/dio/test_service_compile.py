"""Our own DIO's compile against the scripted model server: a complete replacement becomes a
new version, the earlier instructions are sent with the next one, a failed or malformed
compile leaves no version, an instruction that changes nothing is ``promptChanged`` false,
and a task past its 16 minutes is ``timed_out``. Versions move by compare-and-set; revert
and off are new versions, audited."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from console.models import AuditEvent
from roleplay.dio import compiling, selectors, services
from roleplay.dio.engine.compiler import sha256
from roleplay.dio.engine.protocol import Submission, receipt_answer
from roleplay.dio.errors import DioDuplicate, VersionConflict
from roleplay.dio.identity import identity_for
from roleplay.dio.models import DioPromptVersion, DioTask
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelCall

pytestmark = pytest.mark.django_db

SHORT = "From now on, Mira answers in short sentences."


def _compiled(text: str, *changes: str) -> Reply:
    body = {"compiledPrompt": text, "changeset": [{"op": "add", "text": c} for c in changes]}
    return Reply(content=json.dumps(body))


def _submission(conversation, request="turn-1:dio", instruction=SHORT) -> Submission:
    identity = identity_for(conversation)
    return Submission(identity, request, f"{request}:assistant", instruction)


def _submit(conversation, instruction=SHORT, request="turn-1:dio", ref=""):
    submission = _submission(conversation, request, instruction)
    return services.schedule(conversation.tenant_id, submission, model_config_ref=ref)


def _run(task) -> DioTask:
    compiling.run(str(task.pk))
    task.refresh_from_db()
    return task


def test_a_compile_writes_a_complete_replacement_as_a_new_version(conversation, llm, model_config):
    llm.enqueue(_compiled("A lighthouse keeper. She answers in short sentences.", "short"))
    task = _run(_submit(conversation, ref=str(model_config.pk)))
    assert task.status == "succeeded" and task.prompt_changed
    request = llm.requests[-1]
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert "COMPLETE character prompt" in system and "Mira" in system
    assert "A lighthouse keeper." in user and SHORT in user  # the original prompt, the order
    active = selectors.active_prompt(conversation.tenant_id, identity_for(conversation))
    assert active.version == 1 and active.compiled_prompt.endswith("short sentences.")
    assert active.sha256 == sha256(active.compiled_prompt) == task.compiled_sha256
    assert active.changeset == [{"op": "add", "text": "short"}]
    assert ModelCall.objects.filter(purpose="dio_compiler").count() == 1
    # The next instruction sees the prompt in force and the earlier instruction.
    llm.enqueue(_compiled("A lighthouse keeper. Short sentences, no metaphors.", "no metaphors"))
    second = _run(_submit(conversation, "Fewer metaphors, please.", "turn-2:dio"))
    user = llm.requests[-1]["messages"][1]["content"]
    assert "She answers in short sentences." in user and f"- {SHORT}" in user
    version = DioPromptVersion.objects.get(version=2)
    assert second.result_version_id == version.pk and version.source_version.version == 1
    assert version.instructions == [SHORT, "Fewer metaphors, please."]


def test_the_preset_role_prompt_is_used_when_it_has_one(conversation, llm, model_config):
    from roleplay.models import Preset
    from roleplay.prompting.default_preset import default_prompt_data

    prompts = default_prompt_data()
    for prompt in prompts:
        if prompt["name"] == "dio_compiler":
            prompt["content"] = "OPERATOR COMPILER for {{getvar::characterName}}. Answer JSON."
    preset = Preset.objects.create(tenant=conversation.tenant, name="own", prompts=prompts)
    model_config.preset = preset
    model_config.save()
    llm.enqueue(_compiled("Rewritten."))
    assert _run(_submit(conversation, ref=model_config.name)).status == "succeeded"
    assert llm.requests[-1]["messages"][0]["content"] == "OPERATOR COMPILER for Mira. Answer JSON."


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (Reply(content="Sure! I made her terse."), "dio_bad_output"),
        (Reply(content=json.dumps({"changeset": []})), "dio_bad_output"),
        (Reply(status=400, error_body={"error": {"message": "bad"}}), None),
    ],
)
def test_a_failed_compile_leaves_no_version(conversation, llm, reply, code):
    llm.enqueue(reply)
    task = _run(_submit(conversation))
    assert task.status == "failed" and not task.prompt_changed
    assert task.error_code == (code or task.error_code) and task.error_code
    assert not DioPromptVersion.objects.exists()
    assert selectors.active_prompt(conversation.tenant_id, identity_for(conversation)) is None


def test_an_instruction_that_changes_nothing_is_not_a_new_version(conversation, llm):
    llm.enqueue(_compiled("A lighthouse keeper."))  # the original prompt, unchanged
    task = _run(_submit(conversation))
    assert task.status == "succeeded" and task.prompt_changed is False
    assert not DioPromptVersion.objects.exists()


def test_a_missing_model_config_fails_the_task(conversation, llm):
    task = _run(_submit(conversation, ref="no-such-config"))
    assert task.status == "failed" and task.error_code == "model_config_missing"
    assert llm.requests == []


def test_a_task_past_its_budget_times_out_without_a_model_call(conversation, llm):
    task = _submit(conversation)
    DioTask.objects.filter(pk=task.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    status = selectors.task_status(conversation.tenant_id, task.request_id)
    assert status.status == "timed_out"  # read as such even before the worker looks
    task = _run(task)
    assert task.status == "timed_out" and task.error_code == "dio_timed_out"
    assert llm.requests == []


def test_the_sweep_ends_a_lost_task_past_its_deadline_and_leaves_the_others(conversation, llm):
    lost, live = _submit(conversation), _submit(conversation, request="turn-2:dio")
    DioTask.objects.filter(pk=lost.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert services.expire_overdue() == 1
    lost.refresh_from_db()
    live.refresh_from_db()
    assert (lost.status, lost.error_code) == ("timed_out", "dio_timed_out")
    assert lost.finished_at is not None and live.status == "processing"
    assert services.expire_overdue() == 0  # an ended task stays as it ended
    assert llm.requests == []


def test_the_sweep_is_on_the_beat_schedule():
    from django.conf import settings

    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "roleplay.dio_expire" in tasks


def test_a_second_submission_with_the_same_request_id_is_a_duplicate(conversation):
    _submit(conversation)
    with pytest.raises(DioDuplicate) as caught:
        _submit(conversation, "Another instruction.")
    assert caught.value.code == "dio_duplicate"
    assert DioTask.objects.count() == 1


def test_versions_move_by_compare_and_set_and_revert_and_off_are_audited(conversation, llm):
    identity = identity_for(conversation)
    for n, text in enumerate(("First.", "Second."), start=1):
        llm.enqueue(_compiled(text))
        _run(_submit(conversation, f"instruction {n}", f"t{n}:dio"))
    assert selectors.version_number(selectors.latest_version(None, identity)) == 2
    with pytest.raises(VersionConflict) as caught:
        services.revert(conversation, identity, to=1, expected=1)
    assert caught.value.details == {"currentVersion": 2, "expectedVersion": 1}
    reverted = services.revert(conversation, identity, to=1, expected=2, by="user:op")
    assert reverted.version == 3 and reverted.kind == "revert"
    active = selectors.active_prompt(conversation.tenant_id, identity)
    assert active.compiled_prompt == "First." and active.version == 3
    off = services.switch_off(conversation, identity, expected=3)
    assert off.version == 4
    assert selectors.active_prompt(conversation.tenant_id, identity) is None
    assert DioPromptVersion.objects.count() == 4  # versions are kept
    events = AuditEvent.objects.filter(action="dio.version").order_by("created_at", "id")
    assert [e.details["kind"] for e in events] == ["revert", "off"]
    assert events[0].details["to"] == 1 and events[0].tenant_id == conversation.tenant_id
    # After off, a compile starts from the original prompt again, with no earlier instruction.
    llm.enqueue(_compiled("Third."))
    _run(_submit(conversation, "instruction 3", "t3:dio"))
    user = llm.requests[-1]["messages"][1]["content"]
    assert "A lighthouse keeper." in user and "instruction 1" not in user


def test_a_compile_that_loses_the_race_compiles_again_over_the_new_version(
    conversation, llm, monkeypatch
):
    """An operator switches DIO off between the compile's read and its write (the
    interleaving made here by running the operator's real write just before the compile's)."""
    identity = identity_for(conversation)
    task = _submit(conversation)
    real, moved = services.commit_version, []

    def operator_moves_first(*args, **kwargs):
        if not moved:
            moved.append(True)
            services.switch_off(conversation, identity, expected=0)
        return real(*args, **kwargs)

    monkeypatch.setattr(services, "commit_version", operator_moves_first)
    llm.enqueue(_compiled("Compiled before."), _compiled("Compiled after the operator."))
    task = _run(task)
    assert task.status == "succeeded"
    assert [v.kind for v in selectors.versions(None, identity)] == ["compiled", "off"]
    assert (
        selectors.latest_version(None, identity).compiled_prompt == "Compiled after the operator."
    )
    assert len(llm.requests) == 2


def test_accepted_and_completed_reach_the_conversations_sockets(
    conversation, llm, django_capture_on_commit_callbacks
):
    """Through the conversation hub (other processes' sockets hear the channel layer)."""
    from asgiref.sync import async_to_sync, sync_to_async
    from channels.layers import get_channel_layer

    from roleplay.turns import hub

    def submit():
        with django_capture_on_commit_callbacks(execute=True):
            return _submit(conversation)

    async def scenario() -> list[dict]:
        layer = get_channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(hub.group_name(str(conversation.pk)), channel)
        task = await sync_to_async(submit)()
        first = await asyncio.wait_for(layer.receive(channel), timeout=10)
        llm.enqueue(_compiled("Terse Mira."))
        await sync_to_async(_run)(task)
        second = await asyncio.wait_for(layer.receive(channel), timeout=10)
        return [first["event"], second["event"]]

    accepted, completed = async_to_sync(scenario)()
    assert accepted == {"type": "dio.accepted", **receipt_answer(_submission(conversation))}
    assert completed == {"type": "dio.completed", "requestId": "turn-1:dio",
                         "status": "succeeded", "promptChanged": True, "version": 1}  # fmt: skip


def test_the_prompt_in_force_is_one_query(conversation, llm, django_assert_num_queries):
    identity = identity_for(conversation)
    llm.enqueue(_compiled("Terse Mira."))
    _run(_submit(conversation))
    with django_assert_num_queries(1):
        active = selectors.active_prompt(conversation.tenant_id, identity)
    assert active is not None and active.compiled_prompt == "Terse Mira."
    services.switch_off(conversation, identity, expected=1)
    with django_assert_num_queries(1):
        assert selectors.active_prompt(conversation.tenant_id, identity) is None
