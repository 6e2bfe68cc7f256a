"""The runtime's loop (seed 002 lines 1365–1390): what the model reads, its tools and their
argument validation, tool results going back, the commit by compare-and-set."""

from __future__ import annotations

import asyncio
import json

import pytest

from roleplay.workflows.engine.runtime import (
    ModelReply,
    RunContext,
    SlowTurnRuntime,
    StateCandidate,
    StateSnapshot,
    ToolRequest,
    Usage,
)

from .runtime_fakes import Clock, Echo, MemoryStore, ScriptedModel, final, tools_reply

CONTEXT = RunContext(
    "I hand over the copper key.",
    history=[{"role": "assistant", "content": "Lia waits by the gate for the key."}],
)


def make(script, *, echo=None, store=None, prepare=None, capabilities=None):
    clock = Clock()
    model = ScriptedModel(clock, list(script))
    rt = SlowTurnRuntime(
        model,
        "Check continuity; keep facts apart from suggestions.",
        capabilities if capabilities is not None else [echo or Echo()],
        state=store,
        prepare_commit=prepare,
        clock=clock,
    )
    return rt, model


def keep_mood(final, results, context):
    return StateCandidate(
        {"mood": final["content"]}, tools_called=tuple(r["name"] for r in results)
    )


def test_the_model_reads_prompt_state_history_input_and_only_the_given_tools():
    store = MemoryStore({"key": "with Lia"}, 2)
    rt, model = make([final()], store=store)
    asyncio.run(rt.run(CONTEXT))
    request = model.requests[0]
    assert request.messages == [
        {"role": "system", "content": "Check continuity; keep facts apart from suggestions."},
        {"role": "system", "content": 'Saved state (revision 2):\n{"key": "with Lia"}'},
        {"role": "assistant", "content": "Lia waits by the gate for the key."},
        {"role": "user", "content": "I hand over the copper key."},
    ]
    assert [t["function"]["name"] for t in request.tools] == ["echo"]
    assert request.tools[0]["function"]["parameters"] == Echo().input_schema
    assert request.step == 1


def test_a_tool_result_goes_back_to_the_model():
    echo = Echo()
    rt, model = make([tools_reply("echo", args='{"text": "gate rules"}'), final()], echo=echo)
    result = asyncio.run(rt.run(CONTEXT))
    assert result.status == "completed"
    assert echo.seen[0].input == {"text": "gate rules"}
    assert echo.seen[0].query == "I hand over the copper key."
    assert result.tool_results == [
        {"id": "call_0", "name": "echo", "arguments": {"text": "gate rules"}, "status": "ok",
         "value": {"echo": "gate rules"}, "prompt_content": "gate rules"}
    ]  # fmt: skip
    second = model.requests[1].messages
    assert second[-2]["role"] == "assistant"
    assert second[-2]["tool_calls"][0]["function"] == {
        "name": "echo", "arguments": '{"text": "gate rules"}'
    }  # fmt: skip
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call_0"
    assert json.loads(second[-1]["content"]) == {
        "value": {"echo": "gate rules"}, "promptContent": "gate rules"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("echo", {"text": "x" * 21}, "invalid_arguments"),  # maxLength 20
        ("echo", {}, "invalid_arguments"),  # required
        ("echo", {"text": "hi", "more": 1}, "invalid_arguments"),  # additionalProperties
        ("echo", {"text": 3}, "invalid_arguments"),
        ("echo", '{"text": ', "bad_arguments"),
        ("echo", "[1, 2]", "bad_arguments"),
        ("search_everything", {"text": "hi"}, "unknown_tool"),
    ],
)
def test_a_call_that_cannot_run_goes_back_to_the_model_as_its_error(name, arguments, error):
    echo = Echo()
    script = [ModelReply("", (ToolRequest("c1", name, arguments),), Usage(1, 1)), final()]
    rt, model = make(script, echo=echo)
    result = asyncio.run(rt.run(CONTEXT))
    assert result.status == "completed"
    assert echo.seen == []  # never executed
    assert result.tool_results[0]["status"] == "error"
    assert result.tool_results[0]["error"]["code"] == error
    told = json.loads(model.requests[1].messages[-1]["content"])
    assert told["error"]["code"] == error
    assert result.tool_calls == 1  # it still counts


def test_the_schema_error_names_the_field():
    script = [ModelReply("", (ToolRequest("c1", "echo", {"text": 3}),), Usage(1, 1)), final()]
    rt, _ = make(script)
    result = asyncio.run(rt.run(CONTEXT))
    assert result.tool_results[0]["error"]["message"].startswith("text: ")


@pytest.mark.parametrize(("fail", "code"), [("coded", "upstream_error"), ("boom", "tool_failed")])
def test_a_tool_that_raises_is_an_error_result(fail, code):
    rt, _ = make([tools_reply("echo"), final()], echo=Echo(fail=fail))
    result = asyncio.run(rt.run(CONTEXT))
    assert result.status == "completed"
    assert result.tool_results[0]["error"]["code"] == code


def test_a_model_error_fails_the_run():
    def broken(request):
        raise ConnectionError("refused")

    rt, _ = make([broken])
    result = asyncio.run(rt.run(CONTEXT))
    assert result.status == "failed"
    assert result.error == {"code": "model_error", "message": "refused"}


def test_tools_are_checked_when_the_runtime_is_made():
    with pytest.raises(ValueError, match="given twice"):
        make([], capabilities=[Echo(), Echo()])
    with pytest.raises(ValueError, match="invalid schema"):
        make([], capabilities=[Echo(input_schema={"type": "no-such-type"})])


def test_a_candidate_is_committed_and_the_next_run_reads_it():
    store = MemoryStore()
    rt, _ = make([tools_reply("echo"), final("tense")], store=store, prepare=keep_mood)
    first = asyncio.run(rt.run(CONTEXT))
    assert (first.state_outcome, first.revision) == ("committed", 1)
    assert (store.state, store.revision) == ({"mood": "tense"}, 1)
    assert store.writes[0].tools_called == ("echo",)
    rt, model = make([final("calm")], store=store, prepare=keep_mood)
    second = asyncio.run(rt.run(CONTEXT))
    assert model.requests[0].messages[1]["content"] == (
        'Saved state (revision 1):\n{"mood": "tense"}'
    )
    assert (second.state_outcome, second.revision, store.revision) == ("committed", 2, 2)


def test_a_write_that_came_first_makes_ours_stale():
    store = MemoryStore({"mood": "calm"}, 1)

    def meanwhile(request):
        store.state, store.revision = {"mood": "written by another run"}, 2
        return final("tense")

    rt, _ = make([meanwhile], store=store, prepare=keep_mood)
    result = asyncio.run(rt.run(CONTEXT))
    assert result.status == "completed"
    assert result.state_outcome == "stale_write_rejected"
    assert store.state == {"mood": "written by another run"}
    assert result.final == {"content": "tense", "model": "fake"}


def test_a_frozen_snapshot_is_compared_not_the_current_revision():
    """fast+slow: the run compares with the snapshot the turn froze, not a fresh read."""
    store = MemoryStore({"mood": "calm"}, 5)
    rt, model = make([final("tense")], store=store, prepare=keep_mood)
    result = asyncio.run(rt.run(CONTEXT, snapshot=StateSnapshot({"mood": "calm"}, 4)))
    assert result.state_outcome == "stale_write_rejected"
    assert "revision 4" in model.requests[0].messages[1]["content"]
    assert store.revision == 5


@pytest.mark.parametrize("prepare", [None, lambda final, results, context: None])
def test_no_candidate_leaves_the_state_unchanged(prepare):
    store = MemoryStore({"mood": "calm"}, 1)
    rt, _ = make([final()], store=store, prepare=prepare)
    result = asyncio.run(rt.run(CONTEXT))
    assert (result.status, result.state_outcome) == ("completed", "unchanged")
    assert store.writes == [] and store.revision == 1


def test_an_async_prepare_commit_and_its_failure():
    async def prepare(final, results, context):
        return StateCandidate({"mood": "ok"})

    store = MemoryStore()
    rt, _ = make([final()], store=store, prepare=prepare)
    assert asyncio.run(rt.run(CONTEXT)).state_outcome == "committed"

    def broken(final, results, context):
        raise KeyError("mood")

    rt, _ = make([final()], store=store, prepare=broken)
    result = asyncio.run(rt.run(CONTEXT))
    assert (result.status, result.error["code"]) == ("failed", "prepare_commit_failed")
    assert store.revision == 1


def test_a_failed_run_never_commits():
    store = MemoryStore()
    called = []
    rt, _ = make(
        [tools_reply("echo")] * 4,
        store=store,
        prepare=lambda *a: called.append(a) or StateCandidate({}),
    )
    result = asyncio.run(rt.run(CONTEXT))
    assert result.error["code"] == "max_steps_exceeded"
    assert called == [] and store.writes == []


def test_a_cancel_during_a_model_call_fails_the_run():
    class Hanging:
        def __init__(self):
            self.entered = asyncio.Event()

        async def complete(self, request, cancel):
            self.entered.set()
            await asyncio.Event().wait()

    async def scenario():
        model, cancel = Hanging(), asyncio.Event()
        rt = SlowTurnRuntime(model, "p", [Echo()], clock=Clock())
        task = asyncio.create_task(rt.run(CONTEXT, cancel))
        await model.entered.wait()
        cancel.set()
        return await task

    result = asyncio.run(scenario())
    assert (result.status, result.error["code"], result.calls) == ("failed", "cancelled", 0)


def test_the_result_as_json():
    rt, _ = make([final("ok", usage=Usage(3, 4, cost_usd=0.01))])
    body = asyncio.run(rt.run(CONTEXT)).as_json()
    assert body["status"] == "completed"
    assert body["usage"] == {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7,
                             "cost_usd": 0.01}  # fmt: skip
    assert body["stateOutcome"] == "unchanged" and body["calls"] == 1


def test_read_only_schemas_and_arguments_are_validated_as_json():
    """The workflow executor hands inputs as read-only mappings: they validate as objects."""
    from types import MappingProxyType

    schema = MappingProxyType(
        {
            "type": "object",
            "properties": MappingProxyType({"text": MappingProxyType({"type": "string"})}),
            "required": ("text",),
        }
    )
    echo = Echo(input_schema=schema)
    arguments = MappingProxyType({"text": "gate"})
    rt, model = make([tools_reply("echo", args=arguments), final()], echo=echo)
    result = asyncio.run(rt.run(CONTEXT))
    assert result.tool_results[0]["status"] == "ok"
    assert model.requests[0].tools[0]["function"]["parameters"]["required"] == ["text"]
