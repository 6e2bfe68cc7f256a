"""Story's model calls (seed 002, the six tools): each a JSON-schema call whose answer the
engine checks, with at most one repair (two model answers in all), diagnostics and usage.
Models interpret meaning only; every answer goes through the engine's validators, so a model
can never change a clock, an id, a capacity or a mechanical stage.

The caller supplies a :class:`Models` port (the runtime's gateway, a ``ModelCall`` row per
call with purpose ``story_init``, ``story_action``, ``story_plan``, ``story_advance``,
``story_settle`` or ``story_rebranch``). Tools never call each other; the coordinator's
program conditions fix their order.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from console import jsontext
from console.failures import Invalid, Unavailable

T = TypeVar("T")

PURPOSES = (
    "story_init",
    "story_action",
    "story_plan",
    "story_advance",
    "story_settle",
    "story_rebranch",
)
ATTEMPTS = 2  # the answer and one repair


class ModelUnavailable(Unavailable):
    """The model could not be called (its config is gone, or the call failed after the
    gateway's retries). ``recoverable`` (the seed's ``isRecoverableModelError``): False for
    what waiting will not fix, such as refused credentials or permissions, or a request the
    model's server rejects as malformed; such a failure is never swallowed into a fallback,
    it fails the request (the seed: "权限/程序错误等不被统一吞掉")."""

    def __init__(self, code: str, message: str = "", *, recoverable: bool = True) -> None:
        super().__init__(code, message)
        self.recoverable = recoverable


def tolerated(exc: Exception) -> Exception:
    """``exc`` when a tool may fall back on it (an invalid answer, a recoverable model
    failure); an unrecoverable :class:`ModelUnavailable` is raised again."""
    if isinstance(exc, ModelUnavailable) and not exc.recoverable:
        raise exc
    return exc


class ToolInvalid(Invalid, ValueError):
    """Two answers, neither valid: the tool's result is not usable (``<purpose>_invalid``)."""

    def __init__(self, purpose: str, diagnostics: list[str]) -> None:
        super().__init__(f"{purpose}_invalid", f"{purpose}: {'; '.join(diagnostics)}")
        self.purpose, self.diagnostics = purpose, diagnostics


class Models(Protocol):
    """The runtime's model side; ``timeout_s`` (seconds, None: none) bounds one tool call,
    its repair included."""

    timeout_s: float | None

    async def complete(
        self, purpose: str, messages: list[dict[str, str]], response_format: dict[str, Any]
    ) -> tuple[str, dict[str, int]]:
        """(the answer's text, usage); raises :class:`ModelUnavailable`."""
        ...


@dataclass
class Log:
    """What the turn's trace keeps of its tool calls."""

    calls: list[dict[str, Any]] = field(default_factory=list)

    def add(self, purpose: str, outcome: str, started: float, attempts: int, **extra: Any) -> None:
        self.calls.append(
            {
                "tool": purpose,
                "outcome": outcome,
                "attempts": attempts,
                "ms": round((time.perf_counter() - started) * 1000, 1),
                **extra,
            }
        )


async def call(
    models: Models,
    log: Log,
    purpose: str,
    user: str,
    check: Callable[[Any], T],
) -> T:
    """``check(answer)`` of the first valid answer to ``purpose``'s request (its
    :data:`SYSTEM` prompt, ``user`` as the material, its :data:`SCHEMAS` schema);
    :class:`ToolInvalid` after two invalid ones (the second asked with the first's error),
    :class:`ModelUnavailable` passed on. The answer and its repair share one budget,
    ``models.timeout_s`` (the seed: the repair shares the tool call's timeout signal); when
    it runs out the call is unavailable (``model_timeout``)."""
    started = time.perf_counter()
    tried = [0]
    usage: dict[str, int] = {}
    try:
        async with asyncio.timeout(models.timeout_s):
            return await _attempts(models, log, purpose, user, check, started, tried, usage)
    except TimeoutError:
        log.add(purpose, "unavailable", started, tried[0], error="model_timeout", usage=usage)
        raise ModelUnavailable(
            "model_timeout", f"{purpose} took over {models.timeout_s} s"
        ) from None


async def _attempts(
    models: Models,
    log: Log,
    purpose: str,
    user: str,
    check: Callable[[Any], T],
    started: float,
    tried: list[int],
    usage: dict[str, int],
) -> T:
    messages = [{"role": "system", "content": SYSTEM[purpose]}, {"role": "user", "content": user}]
    schema = {"name": purpose, "schema": SCHEMAS[purpose]}
    response_format = {"type": "json_schema", "json_schema": schema}
    diagnostics: list[str] = []
    for attempt in range(1, ATTEMPTS + 1):
        tried[0] = attempt
        try:
            text, used = await models.complete(purpose, messages, response_format)
        except ModelUnavailable as exc:
            log.add(purpose, "unavailable", started, attempt, error=exc.code)
            raise
        for key, value in used.items():
            usage[key] = usage.get(key, 0) + value
        try:
            result = check(jsontext.loads(text))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            problem = str(exc)[:500] or type(exc).__name__
            diagnostics.append(problem)
            messages = messages + [
                {"role": "assistant", "content": text[:4000]},
                {
                    "role": "user",
                    "content": f"That answer was invalid: {problem}. Answer again with one JSON "
                    "object that follows the schema and the rules.",
                },
            ]
            continue
        log.add(purpose, "ok", started, attempt, usage=usage)
        return result
    log.add(purpose, "invalid", started, ATTEMPTS, diagnostics=diagnostics, usage=usage)
    raise ToolInvalid(purpose, diagnostics)


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required if required is not None else list(properties),
        "additionalProperties": False,
    }


STR: dict[str, Any] = {"type": "string"}
TITLED = obj({"title": STR, "owner": STR})
LINE = obj({"theme": STR, "direction": STR, "expected": STR})
IDS = {"type": "array", "items": STR}

SCHEMAS: dict[str, dict[str, Any]] = {
    "story_init": obj(
        {
            "foreground": obj({"title": STR}),
            "backgrounds": {
                "type": "array",
                "items": obj({"title": STR, "owner": STR, "countdown": {"type": "integer"}}),
            },
            "undercurrents": {"type": "array", "items": TITLED},
            "seeds": {"type": "array", "items": TITLED},
            "main": LINE,
            "sub": LINE,
        }
    ),
    "story_action": obj(
        {
            "kind": {"enum": ["normal", "cue", "signal"]},
            "targetId": {"type": ["string", "null"]},
            "companionFollows": {"type": ["boolean", "null"]},
        }
    ),
    "story_plan": obj(
        {
            "goals": {
                "type": "array",
                "items": obj(
                    {
                        "ref": STR,
                        "serves": {"enum": ["main", "sub"]},
                        "angle": {
                            "enum": ["character", "relationship", "conflict", "reveal", "reward"]
                        },
                        "gist": STR,
                        "reward": STR,
                        "core": {"type": "boolean"},
                        "priority": {"type": "integer"},
                        "prerequisites": IDS,
                    },
                    ["ref", "serves", "angle", "gist"],
                ),
            },
            "emotion": obj(
                {
                    "valence": {"type": "number"},
                    "arousal": {"type": "number"},
                    "dominance": {"type": "number"},
                    "label": STR,
                }
            ),
        }
    ),
    "story_advance": obj(
        {
            "delivered": {"type": "boolean"},
            "consequences": {"type": "array", "items": STR},
            "resolved": IDS,
            "nextForeground": {"type": ["string", "null"]},
            "seeds": {"type": "array", "items": TITLED},
            "choices": {
                "type": "array",
                "items": obj({"text": STR, "expect": STR, "isSignal": {"type": "boolean"}}),
            },
        },
        [],
    ),
    "story_settle": obj(
        {
            "outcome": {"enum": ["settled", "unknown"]},
            "completedGoals": {"type": "array", "items": obj({"id": STR, "evidence": IDS})},
            "progress": obj(
                {
                    "main": obj({"advance": {"type": "boolean"}, "evidence": IDS}, ["advance"]),
                    "sub": obj({"advance": {"type": "boolean"}, "evidence": IDS}, ["advance"]),
                },
                [],
            ),
            "observed": obj(
                {
                    "valence": {"type": "number"},
                    "arousal": {"type": "number"},
                    "dominance": {"type": "number"},
                }
            ),
            "direction": {"type": ["string", "null"]},
        },
        ["outcome"],
    ),
    "story_rebranch": obj({"theme": STR, "direction": STR, "expected": STR, "continuity": STR}),
}

SYSTEM: dict[str, str] = {
    "story_init": (
        "You set up an interactive story from a character's material. Describe only what "
        "the material and the visible dialogue establish: the scene now (foreground), up to 3 "
        "off-screen matters already under way (backgrounds, each with a countdown in rounds), "
        "up to 5 hidden developments (undercurrents) and a few later possibilities (seeds), "
        "each with the person or group it belongs to, never the main character; and the main "
        "and sub story lines (theme, direction, expected experience). Write no future event "
        "as a fact and invent no unseen secrets. Answer with JSON only."
    ),
    "story_action": (
        "Classify the user's action in an interactive story: normal (stays in the current "
        "event), cue (turns to one of the listed existing matters; give its id), or signal "
        "(answers the invitation the user actually received; give its id). When unsure, "
        "normal. Never invent an id. For a cue or a signal, also say whether the companion "
        "(the character named under COMPANION) goes along with the user (companionFollows "
        "true or false); for normal, null. Answer with JSON only."
    ),
    "story_plan": (
        "Plan the next goals of an interactive story: 5 to 7 new goals, at least one serving "
        "the sub line, each with a short ref, the line it serves, its angle (character, "
        "relationship, conflict, reveal, reward), a gist, an optional reward, whether it is "
        "core, a priority 1-5 and its prerequisites (refs of new goals or ids of kept goals). "
        "A reward goal must depend on a setup goal. Goals are intentions, not events that "
        "happened. Also give the feeling this cycle should aim for (emotion: valence, arousal, "
        "dominance in -1..1 and a short label), from the lines' expected experience and the "
        "emotion observed so far. Answer with JSON only."
    ),
    "story_advance": (
        "Read the accepted reply of an interactive story and say what it established: "
        "whether the pending invitation was actually delivered (delivered), consequences now "
        "in the scene, ids of listed injections the reply used (resolved), the id of the "
        "next scene among the listed candidates when the current one ended (nextForeground), "
        "new seeds that fit the world (never owned by the main character) and up to 3 "
        "choices for the user. Record only what the reply shows. Answer with JSON only."
    ),
    "story_settle": (
        "Judge what one finished or interrupted event of an interactive story accomplished, "
        "from its accepted replies and user actions only. Mark a goal completed, or a story "
        "line as advanced, only when a reply shows it, citing the message ids as evidence: at "
        "least one of them a reply (kind prose); the user's own words alone are no evidence. "
        "If the replies do not let you judge, answer outcome unknown. Give the observed "
        "emotion (valence, arousal, dominance in -1..1) and the user's explicit new pursuit "
        "(direction) or null. Answer with JSON only."
    ),
    "story_rebranch": (
        "Re-aim one line of an interactive story. Keep every fact that happened and every "
        "unpaid promise; give the line's new theme, direction and expected experience, and a "
        "short note on how it continues from what happened (continuity). Answer with JSON only."
    ),
}


def user_text(**parts: Any) -> str:
    """A model's material: each part under its label, JSON for structures."""
    lines = []
    for label, value in parts.items():
        if value is None or value == "" or value == []:
            continue
        body = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"[{label.upper()}]\n{body}")
    return "\n\n".join(lines)
