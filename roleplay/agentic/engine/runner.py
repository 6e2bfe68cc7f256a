"""One turn's Agent V2 background run (seed 002), pure: the models are behind
:class:`Models`, the state commit is the caller's.

1. **Phase 1**: the orchestrator sees the materials and the enabled tools and picks none,
   some specialists, the Director, or both, at most ``min(maxToolCalls, maxParallelTools)``
   specialists. With ``routingMode: auto`` a selection of at least
   ``escalationToolCallThreshold`` calls is redone by the escalation model. The forced
   rules (``forced``) add specialists.
2. **Specialists** run concurrently, all at once, each one completion; a failure is a
   failure result and the others go on.
3. **Phase 2**: the orchestrator gets the calls and results and may only call
   ``update_director_state``; after a forced specialist the Director is added when it does
   not (seed 002 line 59). A Director the orchestrator asked for in phase 1 alongside
   specialists is deferred until they finish (phase 2 is then not needed).
4. **Director**: a whole new state, checked by ``state.check_candidate``; an invalid one is
   retried with the reason, at most :data:`DIRECTOR_ATTEMPTS` in all.

Outcomes: ``no_tools`` (nothing asked), ``updated`` (a candidate to commit), ``unchanged``
(the Director kept the state, or nothing asked it to write), ``invalid_candidate``,
``failed``; the caller's commit may turn ``updated`` into ``stale_write_rejected``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from roleplay.agentic.engine import forced as forced_rules
from roleplay.agentic.engine import inputs, ledger, state, tools
from roleplay.llm.errors import ModelError
from roleplay.llm.types import CompletionResult, ModelRequest
from roleplay.scenarios.config import DIRECTOR_TOOL, AgenticV2

DIRECTOR_ATTEMPTS = 3
FORCED_REASON = "required by the continuity rules for this turn"
NO_TOOLS, UPDATED, UNCHANGED = "no_tools", "updated", "unchanged"
INVALID, STALE, FAILED = "invalid_candidate", "stale_write_rejected", "failed"


class Models(Protocol):
    """The model side: ``system(role, variables)`` renders the role's prompt from its model
    config's preset; ``complete(role, request)`` calls that config. Roles: ``orchestrator``,
    ``escalation``, ``specialist:<tool>`` and ``director``."""

    def system(self, role: str, variables: dict[str, str]) -> str: ...

    async def complete(self, role: str, request: ModelRequest) -> CompletionResult: ...


@dataclass(frozen=True)
class Inputs:
    """What a run reads, all of it fixed when the turn started (the snapshot)."""

    turn: int
    revision: int
    state: str | None
    entries: list[dict[str, Any]]
    sheet: inputs.Sheet
    persona_name: str
    persona_description: str
    history: list[tuple[str, str]]
    query: str
    first_turn: bool
    lore: list[str] = field(default_factory=list)
    recalled: str = ""
    # Context governance ``enforce``: Compact's summary of the history no longer shown.
    summary: str = ""

    def as_json(self) -> dict[str, Any]:
        """JSON of the inputs (the entries are JSON already and are not copied)."""
        return {
            "turn": self.turn,
            "revision": self.revision,
            "state": self.state,
            "entries": self.entries,
            "sheet": asdict(self.sheet),
            "persona_name": self.persona_name,
            "persona_description": self.persona_description,
            "history": [list(pair) for pair in self.history],
            "query": self.query,
            "first_turn": self.first_turn,
            "lore": list(self.lore),
            "recalled": self.recalled,
            "summary": self.summary,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Inputs:
        return cls(
            **{
                **data,
                "sheet": inputs.Sheet(**data["sheet"]),
                "history": [(str(r), str(t)) for r, t in data["history"]],
            }
        )

    def materials(self, role: str) -> str:
        return inputs.materials(
            role=role,
            sheet=self.sheet,
            persona_name=self.persona_name,
            persona_description=self.persona_description,
            history=self.history,
            query=self.query,
            state=self.state,
            entries=self.entries,
            turn=self.turn,
            revision=self.revision,
            lore=self.lore,
            recalled=self.recalled,
            summary=self.summary,
        )


@dataclass
class Result:
    outcome: str = NO_TOOLS
    error_code: str = ""
    candidate: str | None = None
    tools_requested: list[str] = field(default_factory=list)
    tools_run: list[str] = field(default_factory=list)
    ignored: list[dict[str, Any]] = field(default_factory=list)
    specialists: list[dict[str, Any]] = field(default_factory=list)
    director: dict[str, Any] = field(default_factory=dict)
    forced: list[str] = field(default_factory=list)
    escalated: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    model_ms: float = 0.0

    def ledger_entries(self, turn: int, query: str) -> list[dict[str, Any]]:
        """The entries the successful specialists' results become on commit."""
        return [
            ledger.entry_for(s["tool"], turn, s["text"], query)
            for s in self.specialists
            if s["status"] == "ok" and s["text"]
        ]


@dataclass
class _Run:
    config: AgenticV2
    inputs: Inputs
    models: Models
    result: Result = field(default_factory=Result)

    @property
    def timeout(self) -> float:
        return self.config.modelCallTimeoutMs / 1000

    async def call(self, role: str, request: ModelRequest) -> CompletionResult:
        started = time.perf_counter()
        try:
            return await self.models.complete(role, request)
        finally:
            self.result.model_ms += (time.perf_counter() - started) * 1000

    def variables(self, **extra: str) -> dict[str, str]:
        return {"characterName": self.inputs.sheet.name, **extra}

    def request(self, system: str, user: str, **kwargs: Any) -> ModelRequest:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return ModelRequest(messages, timeout=self.timeout, **kwargs)


async def run(config: AgenticV2, given: Inputs, models: Models) -> Result:
    """The whole background run of one turn; never raises for a model's failure."""
    job = _Run(config, given, models)
    started = time.perf_counter()
    try:
        await _phases(job)
    except ModelError as exc:
        job.result.outcome, job.result.error_code = FAILED, exc.code
    job.result.timings["total_ms"] = _ms(started)
    return job.result


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


async def _phases(job: _Run) -> None:
    result, config = job.result, job.config
    started = time.perf_counter()
    selection, phase1 = await _phase1(job)
    forced = forced_rules.forced_tools(
        first_turn=job.inputs.first_turn,
        recent=[text for _role, text in inputs.recent_dialogue(job.inputs.history)],
        query=job.inputs.query,
        old_state=job.inputs.state,
        known=(job.inputs.sheet.name, job.inputs.persona_name),
        enabled=config.enabledTools,
    )
    tools.add_forced(selection, forced.tools, FORCED_REASON)
    result.forced = list(forced.tools)
    result.tools_requested = selection.requested
    result.ignored = selection.ignored
    result.timings["phase1_ms"] = _ms(started)
    if not selection.specialists and selection.director is None:
        result.outcome = NO_TOOLS
        return
    director = selection.director
    if selection.specialists:
        started = time.perf_counter()
        await _specialists(job, selection.specialists)
        result.timings["specialists_ms"] = _ms(started)
        if director is None and DIRECTOR_TOOL in config.enabledTools:
            started = time.perf_counter()
            director = await _phase2(job, phase1, selection.specialists)
            result.timings["phase2_ms"] = _ms(started)
            if director is None and forced.force_director:
                director = tools.Call(f"forced-{DIRECTOR_TOOL}", DIRECTOR_TOOL, FORCED_REASON,
                                      forced=True)  # fmt: skip
                result.forced.append(DIRECTOR_TOOL)
    if director is None:
        result.outcome = UNCHANGED
        return
    started = time.perf_counter()
    await _director(job, director)
    result.timings["director_ms"] = _ms(started)


async def _phase1(job: _Run) -> tuple[tools.Selection, list[dict[str, Any]]]:
    """The orchestrator's selection (redone by the escalation model past the threshold),
    and the phase-1 conversation phase 2 continues."""
    config = job.config
    selection, messages = await _select(job, "orchestrator")
    if (
        config.routingMode == "auto"
        and len(selection.specialists) + (selection.director is not None)
        >= config.escalationToolCallThreshold
    ):
        job.result.escalated = True
        selection, messages = await _select(job, "escalation")
    return selection, messages


async def _select(job: _Run, role: str) -> tuple[tools.Selection, list[dict[str, Any]]]:
    config = job.config
    enabled = list(config.enabledTools)
    system = job.models.system(role, job.variables(enabledTools=", ".join(enabled)))
    request = job.request(
        system,
        job.inputs.materials("orchestrator"),
        tools=tools.definitions(enabled),
        tool_choice="auto",
        parallel_tool_calls=True,
    )
    answer = await job.call(role, request)
    selection = tools.select(
        answer.tool_calls,
        enabled=enabled,
        max_tool_calls=config.maxToolCalls,
        max_parallel=config.maxParallelTools,
    )
    return selection, list(request.messages)


async def _specialists(job: _Run, calls: Sequence[tools.Call]) -> None:
    """Every selected specialist at once: phase 1's selection is what ``maxParallelTools``
    caps (:func:`tools.select`)."""
    governance = job.config.contextGovernance
    limit = governance.maxToolResultChars if governance and governance.mode == "enforce" else None

    async def one(call: tools.Call) -> dict[str, Any]:
        started = time.perf_counter()
        record: dict[str, Any] = {**call.as_json(), "tool": call.name}
        user = job.inputs.materials("specialist") + f"\n\nWHY YOU ARE ASKED\n{call.reason}"
        if call.focus:
            user += f"\n\nFOCUS\n{call.focus}"
        try:
            system = job.models.system(f"specialist_{call.name}", job.variables())
            answer = await job.call(f"specialist:{call.name}", job.request(system, user))
        except ModelError as exc:
            return {**record, "status": "failed", "error": exc.code, "text": "",
                    "ms": _ms(started)}  # fmt: skip
        text, error = tools.cut_result(answer.content, enforce_limit=limit)
        usage = asdict(answer.usage)
        usage.pop("cached_tokens", None)  # the run record keeps its three counts
        if error:
            return {**record, "status": "failed", "error": error, "text": "", "usage": usage,
                    "ms": _ms(started)}  # fmt: skip
        return {**record, "status": "ok", "text": text, "usage": usage, "ms": _ms(started)}

    done = await asyncio.gather(*(one(call) for call in calls))
    job.result.specialists = list(done)
    job.result.tools_run = [r["tool"] for r in done]


def _tool_message(record: dict[str, Any]) -> dict[str, Any]:
    content = record["text"] if record["status"] == "ok" else f"failed: {record['error']}"
    return {"role": "tool", "tool_call_id": record["id"], "content": content}


async def _phase2(
    job: _Run, phase1: list[dict[str, Any]], calls: Sequence[tools.Call]
) -> tools.Call | None:
    """The orchestrator, given the results, may call only the Director."""
    asked = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _json_args(call)},
            }
            for call in calls
        ],
    }
    messages = [*phase1, asked, *(_tool_message(r) for r in job.result.specialists)]
    request = ModelRequest(
        messages,
        tools=tools.definitions([DIRECTOR_TOOL]),
        tool_choice="auto",
        timeout=job.timeout,
    )
    role = "escalation" if job.result.escalated else "orchestrator"
    answer = await job.call(role, request)
    second = tools.select(
        answer.tool_calls, enabled=[DIRECTOR_TOOL], max_tool_calls=0, director=True
    )
    job.result.ignored.extend({**i, "phase": 2} for i in second.ignored)
    if second.director is not None:
        job.result.tools_requested.append(DIRECTOR_TOOL)
    return second.director


def _json_args(call: tools.Call) -> str:
    args = {"reason": call.reason, **({"focus": call.focus} if call.focus else {})}
    return json.dumps(args, ensure_ascii=False)


async def _director(job: _Run, call: tools.Call) -> None:
    result, config = job.result, job.config
    max_chars = config.maxStateChars
    system = job.models.system("director", job.variables(maxStateChars=str(max_chars)))
    user = job.inputs.materials("director") + f"\n\nWHY THE STATE IS UPDATED\n{call.reason}"
    findings = [
        f"[{s['tool']}] {s['text'] if s['status'] == 'ok' else 'failed: ' + s['error']}"
        for s in result.specialists
    ]
    if findings:
        user += "\n\nSPECIALIST RESULTS\n" + "\n\n".join(findings)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    attempts: list[dict[str, Any]] = []
    result.director = {"reason": call.reason, "attempts": attempts}
    for _ in range(DIRECTOR_ATTEMPTS):
        answer = await job.call("director", ModelRequest(list(messages), timeout=job.timeout))
        verdict = state.check_candidate(answer.content, old=job.inputs.state, max_chars=max_chars)
        attempts.append({"verdict": verdict.code, "message": verdict.message,
                         "chars": len((answer.content or "").strip())})  # fmt: skip
        if verdict.code == state.OK:
            result.outcome, result.candidate = UPDATED, verdict.text
            return
        if verdict.code == state.UNCHANGED:
            result.outcome = UNCHANGED
            return
        messages += [
            {"role": "assistant", "content": answer.content or ""},
            {"role": "user", "content": f"That state was refused: {verdict.message}. Write the "
             "whole state again, following the required structure exactly."},
        ]  # fmt: skip
    result.outcome = INVALID
