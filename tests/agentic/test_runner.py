"""One turn's Agent V2 background run (``roleplay.agentic.engine.runner``), pure: a fake
:class:`Models` scripts each role's answers and records every request, so the phases are
seen call by call: no tools, the forced first turn, specialists then phase 2 then the
Director, the deferred Director, failures, retries of an invalid state, the unchanged state,
the parallelism cap, escalation, enforced governance and the ignored calls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from roleplay.agentic.engine import inputs, runner
from roleplay.llm.errors import ModelError, ModelServerError, ModelTimeout
from roleplay.llm.types import CompletionResult, ModelRequest, ToolCall, Usage
from roleplay.prompting.director_state import DIRECTOR_STATE_HEADER, DIRECTOR_STATE_SECTIONS
from roleplay.scenarios.config import DIRECTOR_TOOL, SPECIALISTS, AgenticV2

SHEET = inputs.Sheet("Mira", "A lighthouse keeper.", "Wry, patient.", "Welcome, traveller.")
QUERY = "i hand over the key."


def state_text(tag: str = "one", length: int = 900) -> str:
    """A valid Director state of ``length`` characters, marked with ``tag``."""
    body = "\n".join(f"{section}: {tag} notes." for section in DIRECTOR_STATE_SECTIONS)
    text = f"{DIRECTOR_STATE_HEADER}\n{body}\n"
    return text + ("Facts kept. " * (length // 12 + 1))[: length - len(text)]


OLD_STATE = state_text("old")
NEW_STATE = state_text("new")


def config(**extra: Any) -> AgenticV2:
    """An Agent V2 config with a model config for every role; ``model_validate`` alone, so
    the scenario's cross-rules (enforce needs compact) are not run."""
    data = {
        "modelConfigs": {
            "actor": "actor",
            "orchestrator": "orchestrator",
            "specialists": {name: f"specialist-{name}" for name in SPECIALISTS},
            "director": "director",
        },
        **extra,
    }
    return AgenticV2.model_validate(data, strict=False)


def given(**extra: Any) -> runner.Inputs:
    """A later turn with a state, whose dialogue names nobody new: nothing is forced."""
    data: dict[str, Any] = {
        "turn": 4,
        "revision": 3,
        "state": OLD_STATE,
        "entries": [],
        "sheet": SHEET,
        "persona_name": "Ann",
        "persona_description": "A sailor.",
        "history": [("user", "we walk to the pier."), ("assistant", "the wind is cold tonight.")],
        "query": QUERY,
        "first_turn": False,
    }
    return runner.Inputs(**{**data, **extra})


def text(content: str) -> CompletionResult:
    return CompletionResult(content, [], Usage.of(10, 5), "fake", "stop", 1.0)


def calls(*names: str | tuple[str, dict[str, Any]]) -> CompletionResult:
    """An answer calling ``names`` (a name, or a name with its arguments)."""
    tool_calls = []
    for n, item in enumerate(names):
        name, arguments = item if isinstance(item, tuple) else (item, {"reason": f"why {item}"})
        tool_calls.append(ToolCall(f"call-{n}-{name}", name, arguments))
    return CompletionResult("", tool_calls, Usage.of(10, 5), "fake", "tool_calls", 1.0)


def phase(request: ModelRequest) -> int:
    """1 for the orchestrator's selection, 2 when it already has the specialists' results."""
    return 2 if any(m.get("role") == "tool" for m in request.messages) else 1


def orchestrator(first: CompletionResult, second: CompletionResult | None = None) -> Callable:
    """An orchestrator answering ``first`` in phase 1 and ``second`` in phase 2."""

    def answer(request: ModelRequest) -> CompletionResult:
        if phase(request) == 1:
            return first
        assert second is not None, "phase 2 was not expected"
        return second

    return answer


Answer = CompletionResult | BaseException | Callable[[ModelRequest], Any]


@dataclass
class FakeModels:
    """The model side of a run. ``answers[role]`` is one answer (given to every call), a list
    (one per call, in order) or a function of the request; an exception is raised. A
    ``specialist:<tool>`` role without an answer of its own takes ``answers["specialist"]``.
    Every call is recorded in ``requests``, every prompt rendered in ``systems``."""

    answers: dict[str, Answer | list[Answer]] = field(default_factory=dict)
    delay: float = 0.0  # how long a specialist takes, to see them overlap
    requests: list[tuple[str, ModelRequest]] = field(default_factory=list)
    systems: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    active: int = 0
    max_active: int = 0

    def system(self, role: str, variables: dict[str, str]) -> str:
        self.systems.append((role, dict(variables)))
        return f"SYSTEM {role}"

    async def complete(self, role: str, request: ModelRequest) -> CompletionResult:
        self.requests.append((role, request))
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.delay and role.startswith("specialist:"):
                await asyncio.sleep(self.delay)
            answer = self._answer(role)
            if callable(answer) and not isinstance(answer, CompletionResult):
                answer = answer(request)
            if isinstance(answer, BaseException):
                raise answer
            return answer
        finally:
            self.active -= 1

    def _answer(self, role: str) -> Any:
        key = role if role in self.answers else role.split(":")[0]
        assert key in self.answers, f"no answer scripted for {role}"
        answer = self.answers[key]
        if isinstance(answer, list):
            assert answer, f"{role} was called more often than scripted"
            return answer.pop(0)
        return answer

    def roles(self) -> list[str]:
        return [role for role, _ in self.requests]

    def of(self, role: str) -> list[ModelRequest]:
        return [request for r, request in self.requests if r == role]


def run(models: FakeModels, agentic: AgenticV2 | None = None, **inputs_extra: Any):
    return asyncio.run(runner.run(agentic or config(), given(**inputs_extra), models))


def tool_messages(request: ModelRequest) -> list[dict[str, Any]]:
    return [m for m in request.messages if m["role"] == "tool"]


# no tools


def test_no_tool_chosen_on_a_later_turn_is_no_tools_with_one_call():
    models = FakeModels({"orchestrator": calls()})
    result = run(models)
    assert result.outcome == "no_tools"
    assert models.roles() == ["orchestrator"]
    assert result.candidate is None and result.forced == [] and result.tools_requested == []
    assert result.specialists == [] and result.tools_run == []
    assert result.ledger_entries(4, QUERY) == []
    assert "total_ms" in result.timings and "phase1_ms" in result.timings


def test_the_orchestrator_is_offered_the_enabled_tools_with_its_materials():
    models = FakeModels({"orchestrator": calls()})
    enabled = ["judge_npc", "manage_callbacks", DIRECTOR_TOOL]
    run(models, config(enabledTools=enabled))
    (request,) = models.of("orchestrator")
    assert [d["function"]["name"] for d in request.tools] == enabled
    assert request.tool_choice == "auto" and request.parallel_tool_calls is True
    assert request.timeout == 180.0  # modelCallTimeoutMs in seconds
    system, user = request.messages
    assert system == {"role": "system", "content": "SYSTEM orchestrator"}
    assert user["role"] == "user"
    assert "LATEST USER QUERY\n" + QUERY in user["content"]
    assert inputs.NO_TOOL_LINE in user["content"]
    assert models.systems == [
        ("orchestrator", {"characterName": "Mira", "enabledTools": ", ".join(enabled)})
    ]


# the first turn


def test_the_first_turn_forces_judge_npc_and_direct_scene_then_offers_the_director():
    models = FakeModels(
        {
            "orchestrator": orchestrator(calls(), calls(DIRECTOR_TOOL)),
            "specialist": text("notes"),
            "director": text(NEW_STATE),
        }
    )
    result = run(models, first_turn=True, state=None, history=[])
    assert result.forced == ["judge_npc", "direct_scene"]
    assert sorted(models.roles()[1:3]) == ["specialist:direct_scene", "specialist:judge_npc"]
    assert models.roles()[3:] == ["orchestrator", "director"]
    assert [s["tool"] for s in result.specialists] == ["judge_npc", "direct_scene"]
    assert all(s["forced"] and s["reason"] == runner.FORCED_REASON for s in result.specialists)
    assert result.tools_requested == [DIRECTOR_TOOL]  # forced specialists were not asked for
    assert result.outcome == "updated" and result.candidate == NEW_STATE.strip()


def test_the_first_turn_forces_only_enabled_specialists():
    models = FakeModels({"orchestrator": calls(), "specialist": text("notes")})
    result = run(models, config(enabledTools=["direct_scene"]), first_turn=True, state=None)
    assert result.forced == ["direct_scene"]
    assert models.roles() == ["orchestrator", "specialist:direct_scene"]
    assert result.outcome == "unchanged"  # no director enabled: nothing writes a state


def test_a_new_name_in_the_dialogue_forces_judge_npc():
    models = FakeModels(
        {
            "orchestrator": orchestrator(calls(), calls()),
            "specialist": text("Reyes is a harbour captain."),
            "director": text(NEW_STATE),
        }
    )
    result = run(models, query="i wave at Captain Reyes.")
    assert result.forced == ["judge_npc", DIRECTOR_TOOL]
    assert "specialist:judge_npc" in models.roles()
    assert result.outcome == "updated"  # the Director was added, though phase 2 chose none


def test_forced_specialists_force_the_director_in_phase_2():
    """Seed 002 line 59: once a forced specialist ran, phase 2 adds
    ``update_director_state`` itself; the orchestrator's own call is kept when it made one."""
    models = FakeModels(
        {
            "orchestrator": orchestrator(calls(), calls()),
            "specialist": text("notes"),
            "director": text(NEW_STATE),
        }
    )
    result = run(models, first_turn=True, state=None, history=[])
    assert models.roles()[-2:] == ["orchestrator", "director"]  # phase 2 still asked
    assert result.forced == ["judge_npc", "direct_scene", DIRECTOR_TOOL]
    assert result.tools_requested == []  # nothing was the model's own choice
    assert result.director["reason"] == runner.FORCED_REASON
    assert result.outcome == "updated" and result.candidate == NEW_STATE.strip()
    # the orchestrator's own Director call wins over the forced one
    models = FakeModels(
        {
            "orchestrator": orchestrator(calls(), calls((DIRECTOR_TOOL, {"reason": "mine"}))),
            "specialist": text("notes"),
            "director": text(NEW_STATE),
        }
    )
    result = run(models, first_turn=True, state=None, history=[])
    assert result.director["reason"] == "mine" and DIRECTOR_TOOL not in result.forced
    # without the Director enabled nothing is forced beyond the specialists
    models = FakeModels({"orchestrator": calls(), "specialist": text("notes")})
    result = run(
        models, config(enabledTools=["judge_npc", "direct_scene"]), first_turn=True, state=None
    )
    assert result.forced == ["judge_npc", "direct_scene"] and result.outcome == "unchanged"


# specialists, phase 2 and the Director


def test_specialists_then_the_director_in_phase_2_is_updated_with_ledger_entries():
    models = FakeModels(
        {
            "orchestrator": orchestrator(
                calls(
                    ("analyze_plot", {"reason": "the arc moved", "focus": "the key"}),
                    "manage_callbacks",
                ),
                calls((DIRECTOR_TOOL, {"reason": "record the promise"})),
            ),
            "specialist:analyze_plot": text("  The arc: the key changes hands.  "),
            "specialist:manage_callbacks": text("Open: return the key by dawn."),
            "director": text("\n" + NEW_STATE + "\n"),
        }
    )
    result = run(models)
    assert result.outcome == "updated" and result.error_code == ""
    assert result.candidate == NEW_STATE.strip()
    assert result.tools_requested == ["analyze_plot", "manage_callbacks", DIRECTOR_TOOL]
    assert result.tools_run == ["analyze_plot", "manage_callbacks"]
    assert [s["status"] for s in result.specialists] == ["ok", "ok"]
    assert result.specialists[0]["text"] == "The arc: the key changes hands."
    assert result.specialists[0]["usage"] == {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
    }
    entries = result.ledger_entries(4, QUERY)
    assert [e["key"] for e in entries] == ["analyze_plot:turn:4", "manage_callbacks:turn:4"]
    assert [e["type"] for e in entries] == ["event", "callback"]
    assert entries[1]["payload"] == {
        "analysis": "Open: return the key by dawn.",
        "sourceTool": "manage_callbacks",
        "sourceTurn": 4,
        "userQuery": QUERY,
    }
    assert result.director["reason"] == "record the promise"
    assert result.director["attempts"] == [{"verdict": "ok", "message": "", "chars": 900}]
    assert {"phase1_ms", "specialists_ms", "phase2_ms", "director_ms"} <= set(result.timings)


def test_a_specialist_reads_its_reason_and_focus_and_its_own_prompt():
    models = FakeModels(
        {
            "orchestrator": orchestrator(
                calls(("analyze_plot", {"reason": "the arc moved", "focus": "the key"})), calls()
            ),
            "specialist": text("notes"),
        }
    )
    run(models)
    (request,) = models.of("specialist:analyze_plot")
    system, user = request.messages
    assert system["content"] == "SYSTEM specialist_analyze_plot"
    assert user["content"].endswith("WHY YOU ARE ASKED\nthe arc moved\n\nFOCUS\nthe key")
    assert "Opening message: Welcome, traveller." in user["content"]
    assert ("specialist_analyze_plot", {"characterName": "Mira"}) in models.systems


def test_phase_2_tool_messages_carry_the_specialists_text_under_their_call_ids():
    models = FakeModels(
        {
            "orchestrator": orchestrator(
                calls(
                    ("judge_npc", {"reason": "who is here", "focus": "the door"}), "analyze_plot"
                ),
                calls(),
            ),
            "specialist:judge_npc": text("Nobody new is present."),
            "specialist:analyze_plot": text("The main line holds."),
        }
    )
    result = run(models)
    phase1, phase2 = models.of("orchestrator")
    assert phase2.messages[:2] == phase1.messages  # phase 2 continues the conversation
    asked = phase2.messages[2]
    assert asked["role"] == "assistant"
    assert [c["id"] for c in asked["tool_calls"]] == ["call-0-judge_npc", "call-1-analyze_plot"]
    assert json.loads(asked["tool_calls"][0]["function"]["arguments"]) == {
        "reason": "who is here",
        "focus": "the door",
    }
    assert tool_messages(phase2) == [
        {"role": "tool", "tool_call_id": "call-0-judge_npc", "content": "Nobody new is present."},
        {"role": "tool", "tool_call_id": "call-1-analyze_plot", "content": "The main line holds."},
    ]
    assert [d["function"]["name"] for d in phase2.tools] == [DIRECTOR_TOOL]  # only the Director
    assert result.outcome == "unchanged"


def test_a_specialist_called_in_phase_2_is_ignored_there():
    models = FakeModels(
        {
            "orchestrator": orchestrator(calls("analyze_plot"), calls("judge_npc")),
            "specialist": text("notes"),
        }
    )
    result = run(models)
    assert models.roles() == ["orchestrator", "specialist:analyze_plot", "orchestrator"]
    assert result.ignored == [
        {"id": "call-0-judge_npc", "name": "judge_npc", "why": "not_enabled", "phase": 2}
    ]
    assert result.outcome == "unchanged"


def test_the_director_asked_with_specialists_in_phase_1_is_deferred_past_them():
    models = FakeModels(
        {
            "orchestrator": orchestrator(calls("simulate_world", DIRECTOR_TOOL)),
            "specialist": text("An hour passes."),
            "director": text(NEW_STATE),
        }
    )
    result = run(models)
    assert models.roles() == ["orchestrator", "specialist:simulate_world", "director"]
    assert len(models.of("orchestrator")) == 1  # no phase 2
    (director,) = models.of("director")
    assert "SPECIALIST RESULTS\n[simulate_world] An hour passes." in director.messages[1]["content"]
    assert result.outcome == "updated" and result.candidate == NEW_STATE.strip()
    assert "phase2_ms" not in result.timings


def test_the_director_alone_in_phase_1_runs_directly():
    models = FakeModels(
        {
            "orchestrator": calls((DIRECTOR_TOOL, {"reason": "tidy the notes"})),
            "director": text(NEW_STATE),
        }
    )
    result = run(models)
    assert models.roles() == ["orchestrator", "director"]
    assert result.specialists == [] and result.tools_run == []
    assert result.tools_requested == [DIRECTOR_TOOL]
    assert result.outcome == "updated"
    (director,) = models.of("director")
    system, user = director.messages
    assert system["content"] == "SYSTEM director"
    assert user["content"].endswith("WHY THE STATE IS UPDATED\ntidy the notes")
    assert "SPECIALIST RESULTS" not in user["content"]
    assert ("director", {"characterName": "Mira", "maxStateChars": "8000"}) in models.systems


def test_without_the_director_enabled_specialists_run_and_nothing_is_written():
    models = FakeModels({"orchestrator": calls("analyze_plot"), "specialist": text("notes")})
    result = run(models, config(enabledTools=list(SPECIALISTS)))
    assert models.roles() == ["orchestrator", "specialist:analyze_plot"]  # no phase 2
    assert result.outcome == "unchanged" and result.candidate is None
    assert [e["key"] for e in result.ledger_entries(4, QUERY)] == ["analyze_plot:turn:4"]


# failures


def test_a_failing_specialist_is_a_failure_record_and_the_others_go_on():
    models = FakeModels(
        {
            "orchestrator": orchestrator(
                calls("analyze_plot", "judge_npc", "manage_callbacks"), calls(DIRECTOR_TOOL)
            ),
            "specialist:analyze_plot": ModelServerError("upstream 502"),
            "specialist:judge_npc": ModelTimeout("too slow"),
            "specialist:manage_callbacks": text("Open: the key."),
            "director": text(NEW_STATE),
        }
    )
    result = run(models)
    by_tool = {s["tool"]: s for s in result.specialists}
    assert by_tool["analyze_plot"]["status"] == "failed"
    assert by_tool["analyze_plot"]["error"] == "model_server_error"
    assert by_tool["judge_npc"]["error"] == "model_timeout"
    assert by_tool["analyze_plot"]["text"] == ""
    assert by_tool["manage_callbacks"]["status"] == "ok"
    assert result.tools_run == ["analyze_plot", "judge_npc", "manage_callbacks"]
    _, phase2 = models.of("orchestrator")
    assert [m["content"] for m in tool_messages(phase2)] == [
        "failed: model_server_error",
        "failed: model_timeout",
        "Open: the key.",
    ]
    (director,) = models.of("director")
    assert "[analyze_plot] failed: model_server_error" in director.messages[1]["content"]
    assert result.outcome == "updated"
    assert [e["key"] for e in result.ledger_entries(4, QUERY)] == ["manage_callbacks:turn:4"]


def test_an_orchestrator_failure_fails_the_run_with_its_code():
    models = FakeModels({"orchestrator": ModelError("model_auth_error", "bad key")})
    result = run(models)
    assert result.outcome == "failed" and result.error_code == "model_auth_error"
    assert models.roles() == ["orchestrator"]
    assert result.candidate is None and "total_ms" in result.timings


def test_a_phase_2_failure_fails_the_run_but_keeps_the_specialists():
    models = FakeModels(
        {
            "orchestrator": [calls("analyze_plot"), ModelTimeout("slow")],
            "specialist": text("notes"),
        }
    )
    result = run(models)
    assert result.outcome == "failed" and result.error_code == "model_timeout"
    assert [s["status"] for s in result.specialists] == ["ok"]


def test_a_director_failure_fails_the_run():
    models = FakeModels(
        {"orchestrator": calls(DIRECTOR_TOOL), "director": ModelServerError("down")}
    )
    result = run(models)
    assert result.outcome == "failed" and result.error_code == "model_server_error"
    assert result.candidate is None


# the Director's state


def test_an_invalid_state_three_times_is_invalid_candidate_after_exactly_three_calls():
    models = FakeModels(
        {
            "orchestrator": calls(DIRECTOR_TOOL),
            "director": [text("too short"), text(""), text("[Agentic RP State]\n" + "x" * 600)],
        }
    )
    result = run(models)
    assert result.outcome == "invalid_candidate" and result.candidate is None
    director_calls = models.of("director")
    assert len(director_calls) == runner.DIRECTOR_ATTEMPTS == 3
    assert [a["verdict"] for a in result.director["attempts"]] == ["too_short", "empty", "sections"]
    # Each retry carries the refused state and why it was refused.
    second = director_calls[1].messages
    assert len(second) == 4
    assert second[2] == {"role": "assistant", "content": "too short"}
    assert second[3]["role"] == "user" and "That state was refused" in second[3]["content"]
    assert len(director_calls[2].messages) == 6


def test_a_valid_state_on_a_retry_is_updated():
    models = FakeModels(
        {
            "orchestrator": calls(DIRECTOR_TOOL),
            "director": [text("<think>hmm</think>"), text(NEW_STATE)],
        }
    )
    result = run(models)
    assert result.outcome == "updated" and result.candidate == NEW_STATE.strip()
    assert len(models.of("director")) == 2
    assert [a["verdict"] for a in result.director["attempts"]] == ["too_short", "ok"]


def test_a_state_over_max_state_chars_is_refused():
    models = FakeModels(
        {"orchestrator": calls(DIRECTOR_TOOL), "director": text(state_text("x", 1200))}
    )
    result = run(models, config(maxStateChars=1000))
    assert result.outcome == "invalid_candidate"
    assert {a["verdict"] for a in result.director["attempts"]} == {"too_long"}


def test_the_director_returning_the_old_state_is_unchanged():
    models = FakeModels(
        {"orchestrator": calls(DIRECTOR_TOOL), "director": text("  " + OLD_STATE + "\n")}
    )
    result = run(models)
    assert result.outcome == "unchanged" and result.candidate is None
    assert len(models.of("director")) == 1  # not retried
    assert [a["verdict"] for a in result.director["attempts"]] == ["unchanged"]


# parallelism


FIVE = ("analyze_plot", "judge_npc", "audit_knowledge", "simulate_world", "manage_callbacks")


def _five_specialists(max_parallel: int, max_calls: int = 7) -> tuple[FakeModels, runner.Result]:
    models = FakeModels(
        {"orchestrator": orchestrator(calls(*FIVE), calls()), "specialist": text("notes")},
        delay=0.02,
    )
    result = run(models, config(maxParallelTools=max_parallel, maxToolCalls=max_calls))
    assert all(s["status"] == "ok" for s in result.specialists)
    return models, result


def test_max_parallel_tools_caps_the_specialists_phase_1_selects():
    """Seed 002 line 139: ``maxParallelTools`` limits phase 1's selection of parallel
    specialists (with ``maxToolCalls``, line 138); those selected all run at once."""
    models, result = _five_specialists(2)
    assert result.tools_run == ["analyze_plot", "judge_npc"] and models.max_active == 2
    assert [(i["name"], i["why"]) for i in result.ignored] == [
        ("audit_knowledge", "over_max_parallel_tools"),
        ("simulate_world", "over_max_parallel_tools"),
        ("manage_callbacks", "over_max_parallel_tools"),
    ]
    models, result = _five_specialists(1)
    assert result.tools_run == ["analyze_plot"] and models.max_active == 1
    models, result = _five_specialists(6)
    assert result.tools_run == list(FIVE) and models.max_active == 5  # all at once
    # the smaller of the two caps decides, and names itself
    models, result = _five_specialists(3, max_calls=2)
    assert result.tools_run == ["analyze_plot", "judge_npc"]
    assert {i["why"] for i in result.ignored} == {"over_max_tool_calls"}


# escalation


def _auto(threshold: int) -> AgenticV2:
    return config(
        routingMode="auto",
        escalationModelConfigId="escalation",
        escalationToolCallThreshold=threshold,
    )


def test_auto_routing_at_the_threshold_is_redone_by_the_escalation_model():
    models = FakeModels(
        {
            "orchestrator": calls("analyze_plot", DIRECTOR_TOOL),
            "escalation": orchestrator(calls("audit_knowledge"), calls(DIRECTOR_TOOL)),
            "specialist": text("notes"),
            "director": text(NEW_STATE),
        }
    )
    result = run(models, _auto(2))
    assert result.escalated is True
    assert models.roles() == [
        "orchestrator",
        "escalation",
        "specialist:audit_knowledge",
        "escalation",  # phase 2 stays with the escalation model
        "director",
    ]
    assert result.tools_run == ["audit_knowledge"]  # the escalation's choice, not the first
    assert result.tools_requested == ["audit_knowledge", DIRECTOR_TOOL]
    assert [role for role, _ in models.systems][:2] == ["orchestrator", "escalation"]
    escalation = models.of("escalation")[0]
    assert escalation.messages[0]["content"] == "SYSTEM escalation"
    assert result.outcome == "updated"


def test_auto_routing_below_the_threshold_keeps_the_orchestrator():
    models = FakeModels(
        {"orchestrator": orchestrator(calls("analyze_plot"), calls()), "specialist": text("n")}
    )
    result = run(models, _auto(2))
    assert result.escalated is False
    assert models.roles() == ["orchestrator", "specialist:analyze_plot", "orchestrator"]


def test_manual_routing_never_escalates():
    models = FakeModels(
        {"orchestrator": orchestrator(calls("analyze_plot", "judge_npc"), calls()),
         "specialist": text("n")}
    )  # fmt: skip
    result = run(
        models, config(escalationModelConfigId="escalation", escalationToolCallThreshold=1)
    )
    assert result.escalated is False and "escalation" not in models.roles()


# governance and cutting


def test_enforced_governance_makes_an_oversized_result_a_failure():
    agentic = config(contextGovernance={"mode": "enforce", "maxToolResultChars": 512})
    models = FakeModels(
        {
            "orchestrator": orchestrator(calls("analyze_plot", "judge_npc"), calls()),
            "specialist:analyze_plot": text("p" * 600),
            "specialist:judge_npc": text("j" * 500),
        }
    )
    result = run(models, agentic)
    by_tool = {s["tool"]: s for s in result.specialists}
    assert by_tool["analyze_plot"]["status"] == "failed"
    assert by_tool["analyze_plot"]["error"] == "tool_result_oversized"
    assert by_tool["analyze_plot"]["text"] == ""
    assert by_tool["judge_npc"]["status"] == "ok" and by_tool["judge_npc"]["text"] == "j" * 500
    _, phase2 = models.of("orchestrator")
    assert tool_messages(phase2)[0]["content"] == "failed: tool_result_oversized"
    assert [e["key"] for e in result.ledger_entries(4, QUERY)] == ["judge_npc:turn:4"]


def test_enforced_governance_keeps_a_result_within_its_limit_whole():
    """Seed 002 lines 72 and 556: with ``enforce``, a result within ``maxToolResultChars``
    is kept whole, even past 5,000 characters."""
    agentic = config(contextGovernance={"mode": "enforce", "maxToolResultChars": 20000})
    models = FakeModels(
        {
            "orchestrator": orchestrator(calls("analyze_plot"), calls()),
            "specialist": text("q" * 12000),
        }
    )
    result = run(models, agentic)
    (record,) = result.specialists
    assert record["status"] == "ok" and record["text"] == "q" * 12000
    _, phase2 = models.of("orchestrator")
    assert tool_messages(phase2)[0]["content"] == "q" * 12000


def test_shadow_governance_only_cuts_at_5000():
    agentic = config(contextGovernance={"mode": "shadow", "maxToolResultChars": 512})
    models = FakeModels(
        {
            "orchestrator": orchestrator(calls("analyze_plot", "judge_npc"), calls()),
            "specialist:analyze_plot": text("p" * 600),
            "specialist:judge_npc": text("j" * 7000),
        }
    )
    result = run(models, agentic)
    by_tool = {s["tool"]: s for s in result.specialists}
    assert by_tool["analyze_plot"]["status"] == "ok" and len(by_tool["analyze_plot"]["text"]) == 600
    assert len(by_tool["judge_npc"]["text"]) == 5000
    _, phase2 = models.of("orchestrator")
    assert tool_messages(phase2)[1]["content"] == by_tool["judge_npc"]["text"]


# ignored calls


def test_unknown_and_not_enabled_tools_are_recorded_and_never_executed():
    models = FakeModels(
        {
            "orchestrator": orchestrator(
                calls("summon_dragon", "simulate_world", ("judge_npc", {"why": "no reason"}),
                      "analyze_plot"),
                calls(),
            ),
            "specialist": text("notes"),
        }
    )  # fmt: skip
    result = run(models, config(enabledTools=["analyze_plot", "judge_npc", DIRECTOR_TOOL]))
    assert [(i["name"], i["why"]) for i in result.ignored] == [
        ("summon_dragon", "unknown_tool"),
        ("simulate_world", "not_enabled"),
        ("judge_npc", "malformed_arguments"),
    ]
    assert models.roles() == ["orchestrator", "specialist:analyze_plot", "orchestrator"]
    assert result.tools_run == ["analyze_plot"] and result.tools_requested == ["analyze_plot"]


def test_only_ignored_calls_is_no_tools():
    models = FakeModels({"orchestrator": calls("summon_dragon")})
    result = run(models)
    assert result.outcome == "no_tools" and models.roles() == ["orchestrator"]
    assert result.ignored == [
        {"id": "call-0-summon_dragon", "name": "summon_dragon", "why": "unknown_tool"}
    ]


def test_specialists_over_max_tool_calls_are_not_run():
    models = FakeModels(
        {
            "orchestrator": orchestrator(
                calls("analyze_plot", "judge_npc", "direct_scene"), calls()
            ),
            "specialist": text("notes"),
        }
    )
    result = run(models, config(maxToolCalls=2))
    assert result.tools_run == ["analyze_plot", "judge_npc"]
    assert [(i["name"], i["why"]) for i in result.ignored] == [
        ("direct_scene", "over_max_tool_calls")
    ]
    assert "specialist:direct_scene" not in models.roles()


# the inputs round trip


def test_inputs_round_trip_through_json():
    original = given(entries=[{"key": "k"}])
    data = json.loads(json.dumps(original.as_json()))
    assert runner.Inputs.from_json(data) == original
