"""SillyTavern's instruct and context templates: their shape, checked, and the built-ins.

An instruct template says how each chat message is wrapped for a model trained on one chat
format (``input_sequence`` before a user message, ``input_suffix`` after it, and so on); a
context template says how the system prompt (``story_string``) and the start of the chat
(``chat_start``) are laid out. Files exported by SillyTavern carry many more keys (UI state,
older names); the ones below are read and checked, the others ignored, so a file from any
recent version imports. A file that cannot be used raises :class:`TemplateError` with the
field at fault; nothing here imports Django.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from console import failures

MAX_SEQUENCE_CHARS = 2_000
MAX_STORY_STRING_CHARS = 20_000
MAX_NAME_CHARS = 100
NAMES_BEHAVIORS = ("none", "force", "always")


class TemplateError(failures.Invalid, ValueError):
    """A template file that cannot be used (422): ``code`` (``instruct_template_invalid``),
    a message, and ``details`` naming the field. Pure: derives from ``console.failures``, so
    every door maps it the same way."""

    default_code = "instruct_template_invalid"

    def __init__(self, message: str, field: str = "", code: str = "instruct_template_invalid"):
        super().__init__(code, message, {"field": field} if field else {})


@dataclass(frozen=True)
class InstructTemplate:
    """One instruct template, in SillyTavern's field names (``docs/llm.md``)."""

    name: str = ""
    input_sequence: str = ""
    input_suffix: str = ""
    output_sequence: str = ""
    output_suffix: str = ""
    system_sequence: str = ""
    system_suffix: str = ""
    first_input_sequence: str = ""
    last_input_sequence: str = ""
    first_output_sequence: str = ""
    last_output_sequence: str = ""
    last_system_sequence: str = ""
    stop_sequence: str = ""
    wrap: bool = True
    macro: bool = True
    names_behavior: str = "force"
    system_same_as_user: bool = False
    sequences_as_stop_strings: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ContextTemplate:
    """The parts of a SillyTavern context template a rendered prompt uses."""

    name: str = ""
    story_string: str = "{{#if system}}{{system}}{{/if}}"
    chat_start: str = ""
    example_separator: str = ""
    names_as_stop_strings: bool = True
    use_stop_strings: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_INSTRUCT_STRINGS = tuple(
    f.name for f in fields(InstructTemplate) if f.type == "str" and f.name != "names_behavior"
)
_INSTRUCT_BOOLS = tuple(f.name for f in fields(InstructTemplate) if f.type == "bool")
_CONTEXT_STRINGS = tuple(f.name for f in fields(ContextTemplate) if f.type == "str")
_CONTEXT_BOOLS = tuple(f.name for f in fields(ContextTemplate) if f.type == "bool")
# Older SillyTavern files name the behaviour of names with two booleans.
_OLD_NAMES = {(True, False): "always", (False, True): "force", (False, False): "none"}


def _text(raw: dict[str, Any], key: str, limit: int) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise TemplateError(f"{key} must be a string", key)
    if len(value) > limit:
        raise TemplateError(f"{key} is longer than {limit} characters", key)
    return value


def _flag(raw: dict[str, Any], key: str) -> bool | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise TemplateError(f"{key} must be true or false", key)
    return value


def _object(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise TemplateError("a template is a JSON object", "file")
    return raw


def parse_instruct(raw: Any) -> InstructTemplate:
    """An instruct template from SillyTavern's JSON (an object with at least
    ``input_sequence`` and ``output_sequence``)."""
    raw = _object(raw)
    if "input_sequence" not in raw or "output_sequence" not in raw:
        field = "input_sequence" if "input_sequence" not in raw else "output_sequence"
        raise TemplateError("an instruct template needs input_sequence and output_sequence", field)
    values: dict[str, Any] = {}
    for key in _INSTRUCT_STRINGS:
        limit = MAX_NAME_CHARS if key == "name" else MAX_SEQUENCE_CHARS
        value = _text(raw, key, limit)
        if value is not None:
            values[key] = value
    for key in _INSTRUCT_BOOLS:
        flag = _flag(raw, key)
        if flag is not None:
            values[key] = flag
    values["names_behavior"] = _names_behavior(raw)
    return InstructTemplate(**values)


def _names_behavior(raw: dict[str, Any]) -> str:
    value = raw.get("names_behavior")
    if value is None:
        always, force = raw.get("names", False), raw.get("names_force_groups", True)
        return _OLD_NAMES.get((bool(always), bool(force)), "always")
    if value not in NAMES_BEHAVIORS:
        raise TemplateError(f"names_behavior must be one of {', '.join(NAMES_BEHAVIORS)}",
                            "names_behavior")  # fmt: skip
    return str(value)


def parse_context(raw: Any) -> ContextTemplate:
    """A context template from SillyTavern's JSON (an object with ``story_string``)."""
    raw = _object(raw)
    if not isinstance(raw.get("story_string"), str):
        raise TemplateError("a context template needs a story_string text", "story_string")
    values: dict[str, Any] = {}
    for key in _CONTEXT_STRINGS:
        limit = {"name": MAX_NAME_CHARS, "story_string": MAX_STORY_STRING_CHARS}.get(
            key, MAX_SEQUENCE_CHARS
        )
        value = _text(raw, key, limit)
        if value is not None:
            values[key] = value
    for key in _CONTEXT_BOOLS:
        flag = _flag(raw, key)
        if flag is not None:
            values[key] = flag
    return ContextTemplate(**values)


def parse_template_file(
    raw: Any,
) -> tuple[InstructTemplate | None, ContextTemplate | None]:
    """What a SillyTavern file holds: an instruct template, a context template, or both (a
    "master export" with ``instruct`` and ``context`` objects). Neither: TemplateError."""
    raw = _object(raw)
    if "instruct" in raw or "context" in raw:
        instruct = parse_instruct(raw["instruct"]) if raw.get("instruct") is not None else None
        context = parse_context(raw["context"]) if raw.get("context") is not None else None
    elif "story_string" in raw:
        instruct, context = None, parse_context(raw)
    else:
        instruct, context = parse_instruct(raw), None
    if instruct is None and context is None:
        raise TemplateError("the file holds no instruct or context template", "file")
    return instruct, context


def _t(**values: Any) -> InstructTemplate:
    return InstructTemplate(**values)


# SillyTavern's shipped templates of these names, field for field as its preset files
# (default/content/presets/instruct/*.json) write them.
BUILTIN_TEMPLATES: dict[str, InstructTemplate] = {
    "chatml": _t(
        name="ChatML",
        input_sequence="<|im_start|>user",
        input_suffix="<|im_end|>\n",
        output_sequence="<|im_start|>assistant",
        output_suffix="<|im_end|>\n",
        system_sequence="<|im_start|>system",
        system_suffix="<|im_end|>\n",
        stop_sequence="<|im_end|>",
        wrap=True,
        names_behavior="force",
    ),
    "alpaca": _t(
        name="Alpaca",
        input_sequence="### Instruction:",
        input_suffix="\n\n",
        output_sequence="### Response:",
        output_suffix="\n\n",
        system_sequence="",
        system_suffix="\n\n",
        wrap=True,
        names_behavior="force",
        system_same_as_user=True,
    ),
    "llama3": _t(
        name="Llama 3 Instruct",
        input_sequence="<|start_header_id|>user<|end_header_id|>\n\n",
        input_suffix="<|eot_id|>",
        output_sequence="<|start_header_id|>assistant<|end_header_id|>\n\n",
        output_suffix="<|eot_id|>",
        system_sequence="<|start_header_id|>system<|end_header_id|>\n\n",
        system_suffix="<|eot_id|>",
        stop_sequence="<|eot_id|>",
        wrap=False,
        names_behavior="force",
    ),
    "mistral_v7": _t(
        name="Mistral V7",
        input_sequence="[INST] ",
        input_suffix="[/INST]",
        output_sequence=" ",
        output_suffix="</s>",
        system_sequence="[SYSTEM_PROMPT] ",
        system_suffix="[/SYSTEM_PROMPT]",
        stop_sequence="</s>",
        wrap=False,
        names_behavior="force",
    ),
    "gemma2": _t(
        name="Gemma 2",
        input_sequence="<start_of_turn>user",
        input_suffix="<end_of_turn>\n",
        output_sequence="<start_of_turn>model",
        output_suffix="<end_of_turn>\n",
        system_sequence="<start_of_turn>system",
        system_suffix="<end_of_turn>\n",
        stop_sequence="<end_of_turn>",
        wrap=True,
        names_behavior="force",
        system_same_as_user=True,
    ),
}


def builtin(name: str) -> InstructTemplate | None:
    """The built-in template of that key (``chatml``, ``alpaca``, ``llama3``,
    ``mistral_v7``, ``gemma2``), or None."""
    return BUILTIN_TEMPLATES.get(name)
