"""The orchestrator's seven tools (seed 002): their definitions, and what a model's tool
calls become. Pure.

Each tool takes ``reason`` (required) and ``focus`` (optional). A call is looked up in the
registry of exactly seven names; an unknown name, a tool the scenario did not enable,
arguments that are not ``{reason, focus?}`` text, a repeated specialist or one over
``maxToolCalls`` or ``maxParallelTools`` is recorded as ignored with why, and never
executed. Both caps bound phase 1's selection (seed 002 lines 138–139: the specialists
phase 1 executes are at most the smaller of the two, and they run at once); the Director
(``update_director_state``) counts against neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from roleplay.scenarios.config import DIRECTOR_TOOL, SPECIALISTS, TOOLS

DESCRIPTIONS = {
    "analyze_plot": "Check whether the main line, the current arc and its branches still fit.",
    "judge_npc": "Check who is present: identity, motives, knowledge, location, entrances.",
    "audit_knowledge": "Audit facts, secrets, lies, guesses, evidence, and who knows what.",
    "simulate_world": "Work out time passing, places, deadlines and off-screen events.",
    "manage_callbacks": "Track promises, clues, items, injuries, obligations, consequences.",
    "direct_scene": "Direct point of view, scene focus and how far the character may lead.",
    DIRECTOR_TOOL: "Rewrite the persistent continuity state from what is now known.",
}
RESULT_CHARS = 5000
CUT = " …"
UNKNOWN, NOT_ENABLED, MALFORMED = "unknown_tool", "not_enabled", "malformed_arguments"
DUPLICATE, OVER_LIMIT = "duplicate", "over_max_tool_calls"
OVER_PARALLEL = "over_max_parallel_tools"


def definitions(names: Sequence[str]) -> list[dict[str, Any]]:
    """The OpenAI tool definitions of ``names``, in registry order."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": DESCRIPTIONS[name],
                "parameters": {
                    "type": "object",
                    "properties": {
                        "reason": {"type": "string", "description": "Why this is needed now."},
                        "focus": {"type": "string", "description": "What to look at."},
                    },
                    "required": ["reason"],
                },
            },
        }
        for name in TOOLS
        if name in names
    ]


@dataclass(frozen=True)
class Call:
    """One accepted call: the tool, why, and what to look at."""

    id: str
    name: str
    reason: str
    focus: str = ""
    forced: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "reason": self.reason,
            "focus": self.focus,
            "forced": self.forced,
        }


@dataclass
class Selection:
    """What phase 1 chose: the specialists to run, the Director's call if any, and every
    call that was ignored with why."""

    specialists: list[Call] = field(default_factory=list)
    director: Call | None = None
    ignored: list[dict[str, Any]] = field(default_factory=list)

    @property
    def requested(self) -> list[str]:
        names = [c.name for c in self.specialists if not c.forced]
        return names + ([self.director.name] if self.director else [])


def _arguments(arguments: Any) -> tuple[str, str] | None:
    if not isinstance(arguments, dict) or set(arguments) - {"reason", "focus"}:
        return None
    reason, focus = arguments.get("reason"), arguments.get("focus", "")
    if not isinstance(reason, str) or not reason.strip() or not isinstance(focus, str | None):
        return None
    return reason.strip(), (focus or "").strip()


def select(
    calls: Sequence[Any],
    *,
    enabled: Sequence[str],
    max_tool_calls: int,
    max_parallel: int | None = None,
    director: bool = True,
) -> Selection:
    """Sort a model's tool calls (objects with ``id``, ``name``, ``arguments``) into a
    :class:`Selection`; ``director=False`` refuses the Director (it is not offered)."""
    chosen = Selection()
    cap = max_tool_calls if max_parallel is None else min(max_tool_calls, max_parallel)
    over = OVER_LIMIT if cap == max_tool_calls else OVER_PARALLEL
    for call in calls:
        name = getattr(call, "name", "")
        record = {"id": getattr(call, "id", ""), "name": name}
        parsed = _arguments(getattr(call, "arguments", None))
        why = None
        if name not in TOOLS:
            why = UNKNOWN
        elif name not in enabled or (name == DIRECTOR_TOOL and not director):
            why = NOT_ENABLED
        elif parsed is None:
            why = MALFORMED
        elif name == DIRECTOR_TOOL and chosen.director is not None:
            why = DUPLICATE
        elif any(c.name == name for c in chosen.specialists):
            why = DUPLICATE
        elif name != DIRECTOR_TOOL and len(chosen.specialists) >= cap:
            why = over
        if why is not None:
            chosen.ignored.append({**record, "why": why})
            continue
        assert parsed is not None
        accepted = Call(record["id"] or f"call-{name}", name, parsed[0], parsed[1])
        if name == DIRECTOR_TOOL:
            chosen.director = accepted
        else:
            chosen.specialists.append(accepted)
    return chosen


def add_forced(selection: Selection, forced: Sequence[str], reason: str) -> None:
    """Add the specialists the forced rules name that the model did not choose."""
    for name in forced:
        if name in SPECIALISTS and not any(c.name == name for c in selection.specialists):
            selection.specialists.append(Call(f"forced-{name}", name, reason, forced=True))


def cut_result(text: str, *, enforce_limit: int | None = None) -> tuple[str, str | None]:
    """A specialist's result as phase 2 and the ledger take it: cut to
    :data:`RESULT_CHARS`; with ``enforce`` governance (``enforce_limit``, the scenario's
    ``maxToolResultChars``) never cut: kept whole within the limit, and over it the failure
    ``tool_result_oversized`` (seed 002 line 556)."""
    text = (text or "").strip()
    if enforce_limit is not None:
        return ("", "tool_result_oversized") if len(text) > enforce_limit else (text, None)
    if len(text) > RESULT_CHARS:
        text = text[: RESULT_CHARS - len(CUT)] + CUT
    return text, None
