"""Where DIO's compiled prompt goes in the Actor's preset, and whether it is the one DIO made.

The seed's replacement rule (``002`` line 1291) is :meth:`LoadedPreset.character_slot`'s,
not a second copy here: exactly one enabled prompt named ``roleplay`` → its whole content
becomes the compiled prompt, its role, injection and place in the list kept; else exactly
one ``{{getvar::systemPrompt}}`` across the Actor's prompts → that macro becomes
``{{getvar::dioCompiledPrompt}}`` and the variable ``dioCompiledPrompt`` is bound to the
compiled prompt. Two ``roleplay`` prompts, several placeholders or no slot at all are a hard
error (:class:`~.ports.DioError` with the code of :data:`SLOT_CODES`): never pick one, never
append the prompt somewhere else.

What comes back is a new preset (the loaded one is shared and frozen) and the variables to
bind; the caller assembles the Actor prompt from them as from any preset, so the control
text, the history and the player's question stay where the template puts them.

Pure: no Django.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, replace

from roleplay.prompting.presets import (
    SYSTEM_PROMPT_VARIABLE,
    CharacterSlot,
    CharacterSlotMissing,
    LoadedPreset,
)
from roleplay.prompting.syntax import iter_macros, split_name

from .ports import ActivePrompt, DioError

COMPILED_VARIABLE = "dioCompiledPrompt"
COMPILED_MACRO = "{{getvar::" + COMPILED_VARIABLE + "}}"
HASH_MISMATCH = "dio_hash_mismatch"
# The seed's three failures of the rule, each a code of its own.
SLOT_CODES = {
    "duplicate_roleplay": "dio_slot_duplicate_roleplay",
    "ambiguous_placeholder": "dio_slot_ambiguous_placeholder",
    "no_slot": "dio_slot_missing",
}


@dataclass(frozen=True)
class Replaced:
    """The preset with the compiled prompt in its slot, the variables to bind, and which
    slot took it (for the turn's trace)."""

    preset: LoadedPreset
    variables: dict[str, str]
    slot: CharacterSlot


def slot_of(preset: LoadedPreset) -> CharacterSlot:
    """``preset``'s character slot, or :class:`DioError` naming why it has none."""
    try:
        return preset.character_slot()
    except CharacterSlotMissing as exc:
        raise DioError(SLOT_CODES[exc.problem], exc.message) from None


def apply_compiled(preset: LoadedPreset, compiled: str) -> Replaced:
    """``preset`` with ``compiled`` in its character slot (module doc); :class:`DioError`
    when the slot rule fails."""
    slot = slot_of(preset)
    prompts = []
    for prompt in preset.prompts:
        if prompt.identifier == slot.identifier:
            content = compiled if slot.kind == "roleplay" else _swap_placeholder(prompt.content)
            prompt = prompt.model_copy(update={"content": content})
        prompts.append(prompt)
    variables = {} if slot.kind == "roleplay" else {COMPILED_VARIABLE: compiled}
    return Replaced(replace(preset, prompts=tuple(prompts)), variables, slot)


def _swap_placeholder(content: str) -> str:
    """``content`` with its one ``{{getvar::systemPrompt}}`` (however spaced or cased, as the
    macro engine reads it) written as :data:`COMPILED_MACRO`."""
    for macro in iter_macros(content):
        name, argument = split_name(macro.body)
        if name == "getvar" and argument is not None and argument.strip() == SYSTEM_PROMPT_VARIABLE:
            return content[: macro.start] + COMPILED_MACRO + content[macro.end :]
    raise AssertionError("character_slot found a placeholder the scan does not")  # pragma: no cover


def sha256_of(text: str) -> str:
    """The hex SHA-256 of ``text`` in UTF-8 (what ``compiledPromptSha256`` carries)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verify(active: ActivePrompt) -> str:
    """``active``'s compiled prompt when its SHA-256 is the one it came with; else
    :class:`DioError` ``dio_hash_mismatch`` (the text was cut or altered on the way)."""
    claimed = (active.sha256 or "").strip().lower()
    if not hmac.compare_digest(sha256_of(active.compiled_prompt).encode(), claimed.encode()):
        raise DioError(
            HASH_MISMATCH,
            f"the active prompt of version {active.version} does not match its SHA-256",
        )
    return active.compiled_prompt


__all__ = [
    "COMPILED_MACRO",
    "COMPILED_VARIABLE",
    "HASH_MISMATCH",
    "SLOT_CODES",
    "Replaced",
    "apply_compiled",
    "sha256_of",
    "slot_of",
    "verify",
]
