"""The runtime's gate (seed 002 line 1399): asked once per run; ``run: false`` completes with
the state kept and zero loop calls; an invalid answer, a gate error or a cancel fails."""

from __future__ import annotations

import asyncio

import pytest

from roleplay.workflows.engine.runtime import RunContext, SlowTurnRuntime, StateCandidate

from .runtime_fakes import Clock, Echo, MemoryStore, ScriptedModel, final, tools_reply


def runtime(gate, store: MemoryStore | None = None, script=None):
    clock = Clock()
    model = ScriptedModel(clock, list(script or [tools_reply("echo"), final()]))
    rt = SlowTurnRuntime(
        model,
        "You check continuity.",
        [Echo()],
        state=store or MemoryStore({"mood": "calm"}, 3),
        gate=gate,
        prepare_commit=lambda final, results, context: StateCandidate({"mood": "tense"}),
        clock=clock,
    )
    return rt, model


def test_a_valid_gate_runs_the_loop_once_asked():
    asked = []

    async def gate(context, cancel):
        asked.append(context.input)
        return {"run": True, "reason": "a new fact", "confidence": 0.7, "latencyMs": 12}

    rt, model = runtime(gate)
    result = asyncio.run(rt.run(RunContext("I hand over the key.")))
    assert result.status == "completed"
    assert result.gate == {"run": True, "reason": "a new fact", "confidence": 0.7, "latencyMs": 12}
    assert asked == ["I hand over the key."]
    assert result.calls == 2 and result.state_outcome == "committed"


@pytest.mark.parametrize(
    "answer",
    [{"run": True, "confidence": 0}, {"run": True, "confidence": 1}, {"run": True, "latencyMs": 0}],
)
def test_the_bounds_of_a_valid_answer(answer):
    rt, _ = runtime(lambda context, cancel: answer)  # a plain function works too
    assert asyncio.run(rt.run(RunContext("hi"))).status == "completed"


def test_run_false_completes_with_the_state_kept_and_no_loop_call():
    store = MemoryStore({"mood": "calm"}, 3)
    rt, model = runtime(lambda c, s: {"run": False, "reason": "nothing new"}, store)
    result = asyncio.run(rt.run(RunContext("hi")))
    assert result.status == "completed"
    assert result.calls == 0 and model.requests == []
    assert result.final is None and result.tool_results == []
    assert result.state_outcome == "unchanged" and result.revision == 3
    assert (store.state, store.revision, store.writes) == ({"mood": "calm"}, 3, [])
    assert result.gate == {"run": False, "reason": "nothing new"}


@pytest.mark.parametrize(
    "answer",
    [
        None,
        True,
        [],
        {},
        {"run": "yes"},
        {"run": 1},
        {"run": True, "reason": 3},
        {"run": True, "confidence": 1.01},
        {"run": True, "confidence": -0.01},
        {"run": True, "confidence": True},
        {"run": True, "confidence": float("nan")},
        {"run": True, "latencyMs": -1},
        {"run": True, "latencyMs": "5"},
        {"run": True, "because": "x"},
    ],
)
def test_an_invalid_answer_fails_the_run(answer):
    store = MemoryStore({"mood": "calm"}, 3)
    rt, model = runtime(lambda c, s: answer, store)
    result = asyncio.run(rt.run(RunContext("hi")))
    assert result.status == "failed"
    assert result.error["code"] == "gate_invalid"
    assert model.requests == [] and store.writes == []


def test_a_gate_that_raises_fails_the_run():
    def gate(context, cancel):
        raise RuntimeError("the gate model is down")

    rt, model = runtime(gate)
    result = asyncio.run(rt.run(RunContext("hi")))
    assert result.error == {
        "code": "gate_failed",
        "message": "the gate failed: the gate model is down",
    }
    assert model.requests == []


def test_a_cancel_before_the_run_fails_it_without_asking_the_gate():
    asked = []
    rt, model = runtime(lambda c, s: asked.append(1) or {"run": True})
    cancel = asyncio.Event()
    cancel.set()
    result = asyncio.run(rt.run(RunContext("hi"), cancel))
    assert result.error["code"] == "cancelled"
    assert asked == [] and model.requests == []


def test_a_cancel_while_the_gate_waits_fails_the_run():
    async def scenario():
        cancel = asyncio.Event()
        entered = asyncio.Event()

        async def gate(context, signal):
            entered.set()
            await asyncio.Event().wait()  # never answers

        rt, model = runtime(gate)
        task = asyncio.create_task(rt.run(RunContext("hi"), cancel))
        await entered.wait()
        cancel.set()
        return await task, model

    result, model = asyncio.run(scenario())
    assert result.error["code"] == "cancelled"
    assert model.requests == []


def test_a_gate_that_answers_after_a_cancel_does_not_run_the_loop():
    cancel = asyncio.Event()

    def gate(context, signal):
        cancel.set()
        return {"run": True}

    rt, model = runtime(gate)
    result = asyncio.run(rt.run(RunContext("hi"), cancel))
    assert result.error["code"] == "cancelled"
    assert model.requests == []
