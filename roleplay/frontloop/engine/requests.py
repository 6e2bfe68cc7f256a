"""One controller tool call checked against the menu: a typed step, or a recorded rejection
(seed 002 lines 478–481 and 498: "返回非法工具请求"; issue: "Unknown tools and malformed
arguments are recorded and not executed").

The call comes from a model, so nothing about it is trusted: the name may be any JSON value
or a 300,000-character string, the arguments any text (not JSON, a list, ``NaN``, a key given
twice, nested 100,000 deep). :func:`read_request` never raises: every way a call can be
wrong is a :class:`Rejection` with a stable code and a reason safe to store in the trace
(``text.clip``). What a rejection leads to is the fallback table's business (``fallbacks``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .menu import ACTOR, COMPLETE, OVER, RESPONSE_MODES, SCHEDULE_DIO, TOOL_NAMES, Menu
from .skills import GENERATE_IMAGE
from .text import clip

MAX_ARGUMENTS_CHARS = 4_000
"""The longest arguments text read; every valid call is under 40 characters."""

# The stable codes of a Rejection.
NO_TOOL_CALL = "no_tool_call"  # the controller answered without calling a function
UNKNOWN_TOOL = "unknown_tool"  # a name the loop does not have (or not a string)
NOT_OFFERED = "tool_not_offered"  # a tool of the loop not on this scenario's menu
MALFORMED_ARGUMENTS = "malformed_arguments"  # not a JSON object
ARGUMENTS_TOO_LONG = "arguments_too_long"
UNKNOWN_ARGUMENT = "unknown_argument"  # a field the tool does not take
WRONG_ARGUMENT_TYPE = "wrong_argument_type"
BAD_ARGUMENT_VALUE = "bad_argument_value"  # a responseMode that is not one of the two
OVER_BEFORE_ACTOR = "over_before_actor"  # over is legal only after an actor step
REJECTION_CODES = (
    NO_TOOL_CALL,
    UNKNOWN_TOOL,
    NOT_OFFERED,
    MALFORMED_ARGUMENTS,
    ARGUMENTS_TOO_LONG,
    UNKNOWN_ARGUMENT,
    WRONG_ARGUMENT_TYPE,
    BAD_ARGUMENT_VALUE,
    OVER_BEFORE_ACTOR,
)


@dataclass(frozen=True)
class ToolRequest:
    """A call as the controller sent it: ``arguments`` is OpenAI's JSON text (or an already
    parsed object, or anything at all); ``call_id`` the call's id, if it had one."""

    name: object
    arguments: object = "{}"
    call_id: object = ""


@dataclass(frozen=True)
class ActorStep:
    response_mode: str = COMPLETE
    tool: str = field(default=ACTOR, init=False)


@dataclass(frozen=True)
class ImageStep:
    tool: str = field(default=GENERATE_IMAGE, init=False)


@dataclass(frozen=True)
class DioStep:
    tool: str = field(default=SCHEDULE_DIO, init=False)


@dataclass(frozen=True)
class OverStep:
    tool: str = field(default=OVER, init=False)


Step = ActorStep | ImageStep | DioStep | OverStep


@dataclass(frozen=True)
class Rejection:
    """A call not executed: ``code`` (:data:`REJECTION_CODES`), a reason, the tool's name as
    sent (clipped)."""

    code: str
    reason: str
    tool: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "reason": self.reason, "tool": self.tool}


def read_request(request: ToolRequest | None, menu: Menu, *, actor_steps: int) -> Step | Rejection:
    """The step ``request`` asks for, or why it is refused; ``actor_steps``: how many actor
    steps this loop has run (``over`` needs one)."""
    if not isinstance(request, ToolRequest):
        return Rejection(NO_TOOL_CALL, "the controller answered without calling a function")
    name = request.name
    shown = clip(name, 64)
    if not isinstance(name, str) or name not in TOOL_NAMES:
        return Rejection(UNKNOWN_TOOL, f"no tool named {shown!r}", shown)
    if not menu.offers(name):
        return Rejection(NOT_OFFERED, f"{name} is not offered in this scenario", shown)
    arguments = _arguments(request.arguments)
    if isinstance(arguments, Rejection):
        return Rejection(arguments.code, arguments.reason, shown)
    if name == ACTOR:
        return _actor(arguments)
    extra = _extra(arguments, ())
    if extra:
        return Rejection(UNKNOWN_ARGUMENT, f"{name} takes no arguments; got {extra}", name)
    if name == OVER:
        if actor_steps < 1:
            return Rejection(OVER_BEFORE_ACTOR, "over is legal only after an actor step", name)
        return OverStep()
    return ImageStep() if name == GENERATE_IMAGE else DioStep()


def _arguments(raw: object) -> dict[str, Any] | Rejection:
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return Rejection(MALFORMED_ARGUMENTS, "arguments must be a JSON object")
    if len(raw) > MAX_ARGUMENTS_CHARS:
        return Rejection(
            ARGUMENTS_TOO_LONG, f"arguments are longer than {MAX_ARGUMENTS_CHARS} characters"
        )
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw, object_pairs_hook=_no_repeats, parse_constant=_no_constant)
    except (ValueError, RecursionError, TypeError) as exc:
        return Rejection(MALFORMED_ARGUMENTS, f"arguments are not JSON: {clip(str(exc), 120)}")
    if not isinstance(value, dict):
        return Rejection(MALFORMED_ARGUMENTS, "arguments must be a JSON object")
    return value


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key is given twice")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _extra(arguments: dict[str, Any], allowed: tuple[str, ...]) -> str:
    extra = [clip(key, 40) for key in arguments if key not in allowed]
    return ", ".join(sorted(extra)[:5])


def _actor(arguments: dict[str, Any]) -> ActorStep | Rejection:
    extra = _extra(arguments, ("responseMode",))
    if extra:
        return Rejection(UNKNOWN_ARGUMENT, f"actor takes only responseMode; got {extra}", ACTOR)
    mode = arguments.get("responseMode")
    if mode is None:
        return ActorStep()
    if not isinstance(mode, str):
        return Rejection(WRONG_ARGUMENT_TYPE, "responseMode must be a string", ACTOR)
    normal = mode.strip().lower()
    if normal not in RESPONSE_MODES:
        return Rejection(
            BAD_ARGUMENT_VALUE,
            f"responseMode {clip(mode, 40)!r} is not one of {', '.join(RESPONSE_MODES)}",
            ACTOR,
        )
    return ActorStep(response_mode=normal)
