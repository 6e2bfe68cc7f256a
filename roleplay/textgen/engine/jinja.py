"""A model's own chat template (Hugging Face's Jinja ``chat_template``): read from a
``tokenizer_config.json`` or a GGUF file's metadata, checked, and used to render the chat.

The template is given ``messages`` (``role`` system/user/assistant and ``content`` text),
``add_generation_prompt=True``, ``bos_token`` and ``eos_token``, in the bounded sandbox of
``sandbox.py``. Many templates refuse what they were not trained on: Gemma's raises on a
``system`` message, Mistral's on two user messages in a row or a chat that opens with the
assistant. The rule (llama.cpp's and SillyTavern's): render the chat as it is; if the
template raises, render it again *folded* — the system messages joined into the first user
message (a user message of their own when none follows), consecutive messages of one role
merged with a blank line, and an empty user message before a chat that opens with the
assistant. If the folded chat raises too, the template cannot be used.

A template is checked when it is saved (:func:`check_template` renders a probe chat), so a
template that does not parse or raises is refused then, not at the first turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import jinja2

from .sandbox import RenderLimit, TemplateRaised, compile_template, render_bounded
from .templates import MAX_NAME_CHARS, TemplateError

MAX_TEMPLATE_CHARS = 100_000
MAX_TOKEN_CHARS = 200
FIELD = "chat_template"
# End-of-turn markers of the common families, sent as stop strings when a template has them.
TURN_MARKERS = ("<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>", "<|eot|>",
                "<|END_OF_TURN_TOKEN|>", "<|end_of_text|>", "<|endoftext|>")  # fmt: skip
_SENTINEL = "\x00REPLY\x00"
PROBE_CHAT = (
    {"role": "system", "content": "You are Alice."},
    {"role": "user", "content": "Hello."},
    {"role": "assistant", "content": "Hi there."},
    {"role": "user", "content": "How are you?"},
)


@dataclass(frozen=True)
class JinjaTemplate:
    """A model's chat template and the special tokens it writes."""

    template: str
    bos_token: str = ""
    eos_token: str = ""
    name: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _token(value: Any, key: str) -> str:
    """A special token: a string, or a ``{"content": ...}`` object (AddedToken's form)."""
    if isinstance(value, dict):
        value = value.get("content")
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_TOKEN_CHARS:
        raise TemplateError(f"{key} must be a string of at most {MAX_TOKEN_CHARS} characters", key)
    return value


def _template_text(value: Any) -> str:
    """``chat_template``: a string, or the list form ``[{name, template}]`` (the
    ``default`` one, else the first)."""
    if isinstance(value, list):
        named = [v for v in value if isinstance(v, dict) and isinstance(v.get("template"), str)]
        if not named:
            raise TemplateError("chat_template lists no {name, template} object", FIELD)
        chosen = next((v for v in named if v.get("name") == "default"), named[0])
        value = chosen["template"]
    if not isinstance(value, str) or not value.strip():
        raise TemplateError("chat_template must be a template text", FIELD)
    if len(value) > MAX_TEMPLATE_CHARS:
        raise TemplateError(f"chat_template is longer than {MAX_TEMPLATE_CHARS} characters", FIELD)
    return value


def is_tokenizer_config(raw: Any) -> bool:
    """Whether an imported file is a ``tokenizer_config.json`` (it has ``chat_template``)."""
    return isinstance(raw, dict) and "chat_template" in raw


def parse_tokenizer_config(raw: Any) -> JinjaTemplate:
    """The checked chat template of a ``tokenizer_config.json``'s JSON."""
    if not isinstance(raw, dict):
        raise TemplateError("a tokenizer config is a JSON object", "file")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise TemplateError("name must be a string", "name")
    return checked(JinjaTemplate(
        template=_template_text(raw.get("chat_template")),
        bos_token=_token(raw.get("bos_token"), "bos_token"),
        eos_token=_token(raw.get("eos_token"), "eos_token"),
        name=name.strip()[:MAX_NAME_CHARS],
    ))  # fmt: skip


def from_dict(raw: dict[str, Any]) -> JinjaTemplate:
    """A template kept in its ``to_dict`` form (already checked when it was saved)."""
    return JinjaTemplate(**{k: str(raw.get(k) or "") for k in ("template", "bos_token",
                                                               "eos_token", "name")})  # fmt: skip


def _compiled(template: JinjaTemplate) -> jinja2.Template:
    try:
        return compile_template(template.template)
    except jinja2.TemplateSyntaxError as exc:
        said = f"chat_template does not parse: {exc.message} (line {exc.lineno})"
        raise TemplateError(said, FIELD) from exc


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def plain_chat(messages: Sequence[dict[str, Any]], *, char_name: str = "",
               user_name: str = "") -> list[dict[str, str]]:  # fmt: skip
    """Messages as a chat template takes them: roles system/user/assistant (a tool's answer
    is a user message), text content, and ``Name: `` before a speaker who is neither the
    character nor the user (a group's)."""
    chat = []
    for message in messages:
        role = message.get("role")
        role = role if role in ("system", "user", "assistant") else "user"
        text = _content(message)
        speaker = message.get("name")
        if role != "system" and isinstance(speaker, str) and speaker:
            if speaker not in (char_name, user_name):
                text = f"{speaker}: {text}"
        chat.append({"role": role, "content": text})
    return chat


def folded(chat: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """The chat as strict templates take it (module doc): system into the first user
    message, same-role runs merged, a user message first."""
    system = "\n\n".join(m["content"] for m in chat if m["role"] == "system" and m["content"])
    rest = [dict(m) for m in chat if m["role"] != "system"]
    if system:
        if rest and rest[0]["role"] == "user":
            rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
        else:
            rest.insert(0, {"role": "user", "content": system})
    merged: list[dict[str, str]] = []
    for message in rest:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1]["content"] = f"{merged[-1]['content']}\n\n{message['content']}"
        else:
            merged.append(message)
    if merged and merged[0]["role"] == "assistant":
        merged.insert(0, {"role": "user", "content": ""})
    return merged


def _render_once(compiled: jinja2.Template, template: JinjaTemplate,
                 chat: list[dict[str, str]], generation: bool) -> str:  # fmt: skip
    variables = {"messages": chat, "add_generation_prompt": generation,
                 "bos_token": template.bos_token, "eos_token": template.eos_token}  # fmt: skip
    return render_bounded(compiled, variables)


def _failure(exc: Exception) -> TemplateError:
    if isinstance(exc, TemplateRaised):
        return TemplateError(f"chat_template refused the chat: {exc}", FIELD)
    if isinstance(exc, RenderLimit):
        return TemplateError(f"chat_template went over its limits: {exc}", FIELD)
    return TemplateError(f"chat_template failed: {type(exc).__name__}: {exc}", FIELD)


def render_chat(template: JinjaTemplate, chat: Sequence[dict[str, str]], *,
                generation: bool = True) -> str:  # fmt: skip
    """``chat`` rendered by ``template`` (as it is, else folded: module doc); a template
    that refuses both raises :class:`TemplateError`."""
    compiled = _compiled(template)
    try:
        return _render_once(compiled, template, list(chat), generation)
    except RecursionError as exc:
        raise _failure(exc) from exc
    except Exception:  # noqa: BLE001 - a template's failure is retried folded, below
        pass
    try:
        return _render_once(compiled, template, folded(chat), generation)
    except (RecursionError, Exception) as exc:  # noqa: BLE001 - any failure is the template's
        raise _failure(exc) from exc


def render_prompt(template: JinjaTemplate, messages: Sequence[dict[str, Any]], *,
                  char_name: str = "", user_name: str = "",
                  continue_final: bool = False) -> str:  # fmt: skip
    """The text a server is given: the chat rendered with the generation prompt, or, to
    continue the last assistant message, rendered up to the end of its text."""
    chat = plain_chat(messages, char_name=char_name, user_name=user_name)
    if not (continue_final and chat and chat[-1]["role"] == "assistant"):
        return render_chat(template, chat)
    chat[-1]["content"] += _SENTINEL
    text = render_chat(template, chat, generation=False)
    cut = text.rfind(_SENTINEL)
    return text[:cut] if cut >= 0 else text


def stop_strings(template: JinjaTemplate, *, user_name: str = "") -> list[str]:
    """``eos_token``, the marker the template writes after an assistant message (found by
    rendering a probe reply: ``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>``...), the
    known end-of-turn markers its text holds, and the user's label (``\\nUser:``)."""
    found: list[str] = []

    def add(text: str) -> None:
        if text.strip() and text not in found:
            found.append(text)

    add(template.eos_token)
    chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": _SENTINEL}]
    try:
        text = render_chat(template, chat, generation=False)
    except TemplateError:
        text = ""
    after = text.rsplit(_SENTINEL, 1)[1] if _SENTINEL in text else ""
    marker = after.strip().split(maxsplit=1)[0] if after.strip() else ""
    if not marker.isalnum():
        add(marker)
    for known in TURN_MARKERS:
        if known in template.template:
            add(known)
    add(f"\n{user_name or 'User'}:")
    return found


def checked(template: JinjaTemplate) -> JinjaTemplate:
    """``template`` once it compiled and rendered the probe chat; else TemplateError."""
    render_chat(template, PROBE_CHAT)
    return template
