"""The chat prompt (assembled messages) rendered to one text through an instruct template,
by SillyTavern's rules (``formatInstructModeChat`` and ``formatInstructModePrompt``):

- each message is its role's sequence, then its text and the role's suffix, the two joined
  by a newline when the template ``wrap``s; ``first_*`` sequences open the first user or
  assistant message, ``last_input_sequence`` the last message when a user wrote it,
  ``last_system_sequence`` a system message that ends the chat; ``system_same_as_user``
  wraps system messages as user ones;
- names: ``always`` writes ``Name: `` before every user and assistant message and ends the
  prompt with the character's label; ``force`` writes it only for a speaker who is neither
  the character nor the user (a message's own ``name``, as in a group); ``none`` never;
- the prompt ends with ``last_output_sequence`` (else ``output_sequence``) and the label per
  ``names_behavior``; a continue ends with the reply to go on from, without its suffix;
- with a context template, the leading system messages are the ``{{system}}`` of its
  ``story_string`` (written as it lays them out, its sequences its own), then ``chat_start``.

``{{char}}``, ``{{user}}`` and ``{{name}}`` in sequences are replaced when ``macro`` is on.
Stop strings (:func:`stop_strings`) are sent to the server and cut locally
(:class:`StopCutter`), since not every server honours every one of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .templates import ContextTemplate, InstructTemplate

_IF_BLOCK = re.compile(r"\{\{#if (\w+)\}\}(.*?)\{\{/if\}\}", re.DOTALL)
_VARIABLE = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Names:
    char: str
    user: str


def _macros(text: str, template: InstructTemplate, names: Names, speaker: str = "") -> str:
    if not template.macro or "{{" not in text:
        return text
    values = {"char": names.char, "user": names.user, "name": speaker or names.char}
    return _VARIABLE.sub(lambda m: values.get(m.group(1).lower(), m.group(0)), text)


def story_string(context: ContextTemplate, values: dict[str, str]) -> str:
    """``story_string`` with ``{{#if x}}...{{/if}}`` blocks and ``{{x}}`` variables filled
    (an unknown variable is empty, as SillyTavern's Handlebars leaves it)."""

    def block(match: re.Match[str]) -> str:
        return match.group(2) if values.get(match.group(1)) else ""

    text = _IF_BLOCK.sub(block, context.story_string)
    return _VARIABLE.sub(lambda m: values.get(m.group(1), ""), text)


def _speaker(message: dict[str, Any], names: Names) -> str:
    own = message.get("name")
    if isinstance(own, str) and own:
        return own
    return names.user if message["role"] == "user" else names.char


def _with_name(message: dict[str, Any], template: InstructTemplate, names: Names) -> bool:
    if message["role"] == "system" or template.names_behavior == "none":
        return False
    if template.names_behavior == "always":
        return True
    return _speaker(message, names) not in (names.char, names.user)


def _affixes(template: InstructTemplate, role: str, *, first: bool, last: bool) -> tuple[str, str]:
    t = template
    if role == "user" or (role == "system" and t.system_same_as_user):
        opening = (t.first_input_sequence if first else "") or (
            t.last_input_sequence if last and role == "user" else ""
        )
        return opening or t.input_sequence, t.input_suffix
    if role == "assistant":
        return (t.first_output_sequence if first else "") or t.output_sequence, t.output_suffix
    return (t.last_system_sequence if last else "") or t.system_sequence, t.system_suffix


def _message(
    message: dict[str, Any],
    template: InstructTemplate,
    names: Names,
    *,
    first: bool,
    last: bool,
    open_end: bool = False,
) -> str:
    speaker = _speaker(message, names)
    prefix, suffix = _affixes(template, message["role"], first=first, last=last)
    body = str(message.get("content") or "")
    if _with_name(message, template, names):
        body = f"{speaker}: {body}"
    parts = [_macros(prefix, template, names, speaker), body]
    if not open_end:
        parts[1] += _macros(suffix, template, names, speaker)
    return ("\n" if template.wrap else "").join(part for part in parts if part)


def _prompt_end(template: InstructTemplate, names: Names) -> str:
    sequence = _macros(template.last_output_sequence or template.output_sequence, template, names)
    label = f"{names.char}:" if template.names_behavior == "always" else ""
    if not template.wrap:
        return sequence + label
    return "\n".join(part for part in (sequence, label) if part) + ("" if label else "\n")


def render_prompt(
    messages: Sequence[dict[str, Any]],
    template: InstructTemplate,
    *,
    char_name: str,
    user_name: str,
    context: ContextTemplate | None = None,
    continue_final: bool = False,
) -> str:
    """The one text a text-completion server is given for ``messages`` (module doc)."""
    names = Names(char_name or "Assistant", user_name or "User")
    chat = list(messages)
    out: list[str] = []
    if context is not None:
        lead = 0
        while lead < len(chat) and chat[lead]["role"] == "system":
            lead += 1
        system = "\n".join(str(m.get("content") or "") for m in chat[:lead])
        values = {"system": system, "char": names.char, "user": names.user}
        story = story_string(context, values)
        out.append(story if not story or story.endswith("\n") else story + "\n")
        if context.chat_start:
            out.append(context.chat_start + "\n")
        chat = chat[lead:]
    open_end = continue_final and bool(chat) and chat[-1]["role"] == "assistant"
    seen: set[str] = set()
    for index, message in enumerate(chat):
        role = message["role"]
        last = index == len(chat) - 1
        out.append(
            _message(
                message, template, names, first=role not in seen, last=last,
                open_end=open_end and last,
            )
        )  # fmt: skip
        seen.add(role)
    if not open_end:
        out.append(_prompt_end(template, names))
    return "".join(out)


def stop_strings(
    template: InstructTemplate,
    *,
    char_name: str,
    user_name: str,
    context: ContextTemplate | None = None,
) -> list[str]:
    """The strings that end a reply: the template's ``stop_sequence``; its sequences when
    ``sequences_as_stop_strings`` (after a newline when it ``wrap``s, as SillyTavern sends
    them); the user's label (``\\nUser:``) unless the context template says otherwise."""
    names = Names(char_name or "Assistant", user_name or "User")
    found: list[str] = []

    def add(text: str, *, wrapped: bool) -> None:
        if text.strip():
            text = _macros(("\n" + text) if wrapped and template.wrap else text, template, names)
            if text not in found:
                found.append(text)

    add(template.stop_sequence, wrapped=False)
    if template.sequences_as_stop_strings:
        t = template
        for sequence in (
            t.input_sequence, t.output_sequence, t.first_input_sequence, t.last_input_sequence,
            t.first_output_sequence, t.last_output_sequence, t.system_sequence,
            t.last_system_sequence,
        ):  # fmt: skip
            add(sequence, wrapped=True)
    if (context or ContextTemplate()).names_as_stop_strings:
        add(f"\n{names.user}:", wrapped=False)
    return found


class StopCutter:
    """Streams text up to the first stop string: what may be shown at once is returned,
    the tail that could still begin a stop string is held back; once one is met,
    :attr:`stopped` is true and nothing after it is ever returned."""

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = [stop for stop in stops if stop]
        self.held = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        if self.stopped:
            return ""
        buffer = self.held + text
        cut = min((i for i in (buffer.find(s) for s in self.stops) if i >= 0), default=-1)
        if cut >= 0:
            self.stopped, self.held = True, ""
            return buffer[:cut]
        keep = self._partial(buffer)
        self.held = buffer[len(buffer) - keep :] if keep else ""
        return buffer[: len(buffer) - keep]

    def _partial(self, buffer: str) -> int:
        """The length of the longest end of ``buffer`` that begins some stop string."""
        longest = 0
        for stop in self.stops:
            for size in range(min(len(stop) - 1, len(buffer)), longest, -1):
                if buffer.endswith(stop[:size]):
                    longest = size
                    break
        return longest

    def finish(self) -> str:
        """The held tail once the stream ended without a stop string."""
        held, self.held = self.held, ""
        return "" if self.stopped else held
