"""What our own DIO asks its model, and what it accepts back (``docs/dio.md``).

The seed leaves compiling to the DIO service; ours does it with one model call whose
system prompt is the ``dio_compiler`` role prompt (:data:`DIO_COMPILER_PROMPT` is the text
the shipped preset carries) and whose user message holds the material: the character
prompt in force, the instructions accepted earlier, and the new one. The answer must be
one JSON object::

    {"compiledPrompt": "<the complete character prompt>",
     "changeset": [{"op": "add" | "change" | "remove" | "none", "text": "..."}]}

``compiledPrompt`` replaces the whole character slot of the Actor's preset, so it is the
complete prompt, never a fragment to append. An answer that breaks this shape is a
:class:`CompileOutputInvalid` (the task fails with ``dio_bad_output``; no version is made).

Pure: no Django.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

DIO_COMPILER_ROLE = "dio_compiler"
MAX_PROMPT_CHARS = 100_000  # a character description's limit
MAX_INSTRUCTION_CHARS = 8_000
MAX_CHANGES = 50
MAX_CHANGE_TEXT = 2_000
CHANGE_OPS = ("add", "change", "remove", "none")

DIO_COMPILER_PROMPT = """\
You maintain the character prompt of {{getvar::characterName}} in a roleplay. The player \
has given a lasting instruction about how {{getvar::characterName}} should behave from now \
on. Rewrite the character prompt so that it follows the new instruction and every earlier \
accepted instruction you are given.

Rules:
- Write the COMPLETE character prompt: it replaces the current one word for word, so keep \
everything of the current prompt that the instructions do not change (identity, background, \
voice, relationships). Never answer with only the change.
- Where the new instruction contradicts an earlier one, the new one wins.
- If the instruction changes nothing (it is already followed, or it is not about the \
character), return the current prompt unchanged and an empty changeset.
- Do not add anything the instructions did not ask for.

Answer with one JSON object and nothing else:
{"compiledPrompt": "<the complete new character prompt>", "changeset": [{"op": "add", \
"text": "<what changed, in a few words>"}]}
Each changeset entry's op is one of add, change, remove."""


class CompileOutputInvalid(ValueError):
    """The compiler's answer is not the JSON object this module describes."""


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def material(current: str, earlier: Sequence[str], instruction: str, language: str = "") -> str:
    """The user message of the compile call."""
    lines = ["CURRENT CHARACTER PROMPT:", current or "(empty)", ""]
    lines.append("EARLIER ACCEPTED INSTRUCTIONS (oldest first):")
    lines.extend([f"- {text}" for text in earlier] or ["(none)"])
    lines += ["", "NEW INSTRUCTION:", instruction]
    if language:
        lines += ["", f"The player wrote in language: {language}."]
    return "\n".join(lines)


def messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_output(answer: Any) -> tuple[str, list[dict[str, str]]]:
    """(compiled prompt, changeset) of a decoded answer; else :class:`CompileOutputInvalid`."""
    if not isinstance(answer, dict):
        raise CompileOutputInvalid("the answer is not a JSON object")
    compiled = answer.get("compiledPrompt")
    if not isinstance(compiled, str) or not compiled.strip():
        raise CompileOutputInvalid("compiledPrompt is missing or empty")
    if len(compiled) > MAX_PROMPT_CHARS:
        raise CompileOutputInvalid(f"compiledPrompt is longer than {MAX_PROMPT_CHARS} characters")
    if "\x00" in compiled:
        raise CompileOutputInvalid("compiledPrompt holds a NUL character")
    raw = answer.get("changeset", [])
    if not isinstance(raw, list) or len(raw) > MAX_CHANGES:
        raise CompileOutputInvalid(f"changeset is not a list of at most {MAX_CHANGES} entries")
    changes = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise CompileOutputInvalid(f"changeset[{i}] is not an object")
        op, text = entry.get("op"), entry.get("text", "")
        if op not in CHANGE_OPS or not isinstance(text, str) or len(text) > MAX_CHANGE_TEXT:
            raise CompileOutputInvalid(f"changeset[{i}] needs an op of {CHANGE_OPS} and a text")
        changes.append({"op": op, "text": text.replace("\x00", "")})
    return compiled, changes
