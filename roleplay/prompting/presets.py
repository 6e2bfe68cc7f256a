"""Presets: the ordered prompts of a model config, their markers and the named prompts.

A preset is SillyTavern's PromptManager list made explicit and checked. Each prompt is

    {"identifier": "main", "name": "Main Prompt", "role": "system", "content": "...",
     "enabled": true, "injection": {"position": "relative"}, "forbid_overrides": false}

``injection`` says where the prompt goes:

- ``{"position": "relative"}``: in the Actor's messages, at its place in the list;
- ``{"position": "at_depth", "depth": d, "order": o}``: inside the history, ``d`` messages
  from its end (0 after the last message, 1 before it, beyond the history before the first);
  prompts at one depth go in ascending ``order`` (SillyTavern's ``injection_order``, default
  100), ties by their place in the list;
- ``{"position": "none"}``: not an Actor message at all. Role templates (``director``,
  ``auto_reply``...) are such prompts: a capability looks them up by name. A SillyTavern
  prompt that its ``prompt_order`` does not list is imported this way too.

**Markers** are prompts whose identifier is one of :data:`MARKERS`; the assembly fills them
and they stay ``relative``:

==================  ===================================================================
``chatHistory``     the history: the conversation's opening line, then the stored messages
                    that fit the budget (``at_depth`` prompts are counted from its end).
                    Required, enabled, exactly once.
``userInput``       the player's current message. Required, enabled, exactly once, after
                    ``chatHistory`` (SillyTavern has no such marker: its history ends with
                    the input; the importer adds this one right after ``chatHistory``).
``charDescription`` the character's description
``charPersonality`` the character's personality
``scenario``        the character's scenario
``personaDescription``  the player's persona description
``dialogueExamples``    the character's example dialogues
``worldInfoBefore`` worldbook blocks placed ``before_character``
``worldInfoAfter``  worldbook blocks placed ``after_character``
==================  ===================================================================

A content marker whose content is empty (no personality on the card, no worldbook block)
adds nothing. The five card and persona markers may carry a *wrapper* as their ``content``:
a template that must name its field's macro (``{{personality}}`` for ``charPersonality``,
:data:`MARKER_FIELDS`), e.g. ``"{{char}}'s personality: {{personality}}"``; it is expanded
only when the field is not empty (SillyTavern's ``personality_format``/``scenario_format``).
``chatHistory``, ``userInput`` and the world info markers take no content.

**Well-known prompts** (by identifier, as in SillyTavern): ``main``, whose content a card's
``system_prompt`` replaces when the card has one; ``postHistoryInstructions``
(SillyTavern's ``jailbreak``), whose content a card's ``post_history_instructions``
replace; ``forbid_overrides: true`` on either keeps the preset's text. A relative prompt
whose expanded content is blank adds no message.

**Named prompts** are found by ``name`` (:meth:`LoadedPreset.named`): ``roleplay``, the
character prompt slot, is part of the Actor's list; the role templates
(:data:`ROLE_TEMPLATES`) are ``position: none`` system prompts. Rules checked on every save
(:func:`validate_prompts`, each problem with a stable ``code``):

- ``auto_reply`` holds ``{{getvar::language}}`` (the seed's rule);
- ``director`` holds the state header and, after it, every section label followed by ``:``,
  in order (what "an explicit state header and sections" means here; the format and its
  check are :mod:`roleplay.prompting.director_state`'s, which Agent V2 uses for the
  Director's output too);
- at most one prompt per named-prompt name; without a ``roleplay`` prompt, at most one
  ``{{getvar::systemPrompt}}`` across the Actor's prompts (the seed's slot rule; a preset
  with neither is valid, but :meth:`LoadedPreset.character_slot` then fails).

Pure: no Django; the services store ``model_dump`` of these models as ``Preset.prompts``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import (
    ValidationError,
)
from pydantic_core import ErrorDetails

from console import failures
from roleplay.errors import RoleplayError
from roleplay.prompting.director_state import (
    state_format_problems,
)
from roleplay.prompting.macros import referenced_variables
from roleplay.prompting.preset_prompts import (
    AUTO_REPLY,
    AUXILIARY,
    CHAT_HISTORY,
    COMPACTOR,
    DEFAULT_ORDER,
    DIO_COMPILER,
    DIRECTOR,
    ENHANCE_DEFINITIONS,
    FRONT_CONTROLLER,
    IDENTIFIER_PATTERN,
    LANGUAGE_VARIABLE,
    MAIN,
    MARKER_FIELDS,
    MARKERS,
    MAX_CONTENT_CHARS,
    MAX_DEPTH,
    MAX_IDENTIFIER_CHARS,
    MAX_NAME_CHARS,
    MAX_PROMPTS,
    MAX_TOTAL_CHARS,
    NAMED_PROMPTS,
    ORCHESTRATOR,
    ORDER_LIMIT,
    POSITIONS,
    POST_HISTORY,
    PROMPTS,
    REQUIRED_MARKERS,
    ROLE_TEMPLATES,
    ROLEPLAY,
    ROLES,
    SPECIALIST_TOOLS,
    SPECIALISTS,
    STORY_WRITER,
    SYSTEM_PROMPT_VARIABLE,
    TURN_CONTEXT,
    USER_INPUT,
    WORLD_INFO_MARKERS,
    AtDepth,
    Content,
    Injection,
    Name,
    NotPlaced,
    PresetInvalid,
    Problem,
    Prompt,
    Relative,
)
from roleplay.prompting.syntax import iter_macros, split_name


class NamedPromptMissing(RoleplayError, failures.Invalid):
    """A capability needs a named prompt the preset lacks or has disabled (422
    ``named_prompt_missing``): a configuration error naming the preset and the prompt."""

    default_code = "named_prompt_missing"

    def __init__(self, preset: LoadedPreset, names: Sequence[str], reason: str = "") -> None:
        label = ", ".join(names)
        super().__init__(
            message=f"preset “{preset.name}” has no usable prompt named {label}"
            + (f": {reason}" if reason else ""),
            details={
                "preset": preset.name,
                "preset_id": preset.id,
                "names": list(names),
                "reason": reason,
            },
        )


SlotProblem = Literal["duplicate_roleplay", "ambiguous_placeholder", "no_slot"]


class CharacterSlotMissing(NamedPromptMissing):
    """The preset has no single character prompt slot (:meth:`LoadedPreset.character_slot`):
    ``problem`` (also ``details.problem``) is which of the seed's three failures it is."""

    def __init__(self, preset: LoadedPreset, problem: SlotProblem, reason: str) -> None:
        super().__init__(preset, [ROLEPLAY], reason)
        self.problem = problem
        self.details["problem"] = problem


# --- validation ---------------------------------------------------------------------------

_PYDANTIC_CODES = {
    "extra_forbidden": "unknown_field",
    "missing": "missing_field",
    "string_too_long": "too_long",
    "string_too_short": "too_short",
    "too_long": "too_many_prompts",
    "string_pattern_mismatch": "invalid_identifier",
    "union_tag_invalid": "illegal_position",
    "union_tag_not_found": "illegal_position",
    "greater_than_equal": "out_of_range",
    "less_than_equal": "out_of_range",
    "value_error": "unstorable_text",
    "string_unicode": "unstorable_text",
}


def _pydantic_problem(error: ErrorDetails, data: Sequence[Any]) -> Problem:
    loc = [part for part in error.get("loc", ()) if part not in POSITIONS]
    kind = str(error.get("type", ""))
    code = _PYDANTIC_CODES.get(kind, "invalid_value")
    if kind == "literal_error" and loc and loc[-1] == "role":
        code = "illegal_role"
    elif kind == "literal_error":
        code = "illegal_position"
    msg = str(error.get("msg", "invalid value"))
    if kind == "extra_forbidden":
        msg = f"unknown field {str(loc[-1])!r}"
    elif kind.startswith("union_tag"):
        msg = f"position must be one of {', '.join(POSITIONS)}"
    identifier = None
    if loc and isinstance(loc[0], int) and isinstance(data[loc[0]], dict):
        raw = data[loc[0]].get("identifier")
        identifier = raw if isinstance(raw, str) else None
    return Problem(code, ".".join(["prompts", *map(str, loc)]), msg, identifier)


def parse_prompts(data: Any) -> list[Prompt]:
    """``data`` (JSON) as prompts, field by field; raises :class:`PresetInvalid`."""
    if not isinstance(data, list):
        raise PresetInvalid([Problem("invalid_type", "prompts", "prompts must be a list")])
    if len(data) > MAX_PROMPTS:
        msg = f"a preset has at most {MAX_PROMPTS} prompts, not {len(data)}"
        raise PresetInvalid([Problem("too_many_prompts", "prompts", msg)])
    try:
        return PROMPTS.validate_python(data, strict=True)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        raise PresetInvalid([_pydantic_problem(e, data) for e in errors]) from exc


def validate_prompts(data: Any) -> list[Prompt]:
    """``data`` as prompts that keep every rule of the module docstring, else
    :class:`PresetInvalid` listing every problem (fields first, then the rules across
    prompts)."""
    prompts = parse_prompts(data)
    problems = preset_problems(prompts)
    if problems:
        raise PresetInvalid(problems)
    return prompts


def preset_problems(prompts: Sequence[Prompt]) -> list[Problem]:
    """Every rule across prompts that ``prompts`` (valid field by field) break."""
    problems: list[Problem] = []
    problems += _identifier_problems(prompts)
    problems += _marker_problems(prompts)
    problems += _named_problems(prompts)
    total = sum(len(p.content) for p in prompts)
    if total > MAX_TOTAL_CHARS:
        msg = f"the prompts hold {total} characters; a preset holds at most {MAX_TOTAL_CHARS}"
        problems.append(Problem("preset_too_large", "prompts", msg))
    return problems


def _at(index: int, prompt: Prompt, code: str, msg: str, field: str = "") -> Problem:
    loc = f"prompts.{index}" + (f".{field}" if field else "")
    return Problem(code, loc, msg, prompt.identifier)


def _identifier_problems(prompts: Sequence[Prompt]) -> Iterable[Problem]:
    seen: set[str] = set()
    for i, p in enumerate(prompts):
        if p.identifier in seen:
            code = "marker_duplicate" if p.is_marker else "duplicate_identifier"
            yield _at(i, p, code, f"identifier {p.identifier!r} is used twice", "identifier")
        seen.add(p.identifier)


def _macro_names(text: str) -> set[str]:
    return {split_name(macro.body)[0] for macro in iter_macros(text)}


def _marker_problems(prompts: Sequence[Prompt]) -> Iterable[Problem]:
    where = {p.identifier: i for i, p in reversed(list(enumerate(prompts)))}
    for marker in REQUIRED_MARKERS:
        if marker not in where:
            yield Problem("marker_missing", "prompts", f"the {marker} marker is missing", marker)
        elif not prompts[where[marker]].enabled:
            i = where[marker]
            yield _at(i, prompts[i], "marker_disabled", f"{marker} must stay enabled", "enabled")
    if all(m in where for m in REQUIRED_MARKERS) and where[USER_INPUT] < where[CHAT_HISTORY]:
        i = where[USER_INPUT]
        msg = "userInput must come after chatHistory"
        yield _at(i, prompts[i], "marker_order", msg)
    for i, p in enumerate(prompts):
        if not p.is_marker:
            continue
        if p.injection.position != "relative":
            msg = "markers stay in the list (position relative)"
            yield _at(i, p, "marker_not_relative", msg, "injection")
        field = MARKER_FIELDS.get(p.identifier)
        if field is None and p.content:
            msg = f"the {p.identifier} marker takes no content"
            yield _at(i, p, "marker_content_not_allowed", msg, "content")
        elif field is not None and p.content and field.lower() not in _macro_names(p.content):
            msg = f"a {p.identifier} wrapper must contain {{{{{field}}}}}"
            yield _at(i, p, "marker_wrapper_missing_field", msg, "content")


def _named_problems(prompts: Sequence[Prompt]) -> Iterable[Problem]:
    seen: set[str] = set()
    for i, p in enumerate(prompts):
        if p.name not in NAMED_PROMPTS:
            continue
        if p.name in seen:
            msg = f"more than one prompt is named {p.name!r}; a named prompt must be unique"
            yield _at(i, p, "duplicate_named_prompt", msg, "name")
        seen.add(p.name)
        if p.is_marker:
            msg = f"a marker cannot be the {p.name!r} named prompt"
            yield _at(i, p, "named_prompt_is_marker", msg, "name")
        elif p.name == ROLEPLAY and not p.placed:
            msg = "the roleplay prompt is the character prompt slot: it must be placed"
            yield _at(i, p, "roleplay_not_placed", msg, "injection")
        elif p.name != ROLEPLAY:
            yield from _template_problems(i, p)
    if ROLEPLAY not in seen:
        slots = {
            i: n
            for i, p in enumerate(prompts)
            if p.placed and (n := referenced_variables(p.content).count(SYSTEM_PROMPT_VARIABLE))
        }
        if sum(slots.values()) > 1:
            msg = (
                f"without a roleplay prompt there must be at most one "
                f"{{{{getvar::{SYSTEM_PROMPT_VARIABLE}}}}} placeholder; found {sum(slots.values())}"
            )
            for i in slots:
                yield _at(i, prompts[i], "ambiguous_character_slot", msg, "content")


def _template_problems(i: int, p: Prompt) -> Iterable[Problem]:
    if p.placed:
        msg = f"{p.name!r} is a role template, not an Actor message: set position none"
        yield _at(i, p, "template_placed", msg, "injection")
    if p.role != "system":
        yield _at(i, p, "template_not_system", f"{p.name!r} must be a system prompt", "role")
    if p.name == AUTO_REPLY and LANGUAGE_VARIABLE not in referenced_variables(p.content):
        msg = "auto_reply must contain {{getvar::language}}"
        yield _at(i, p, "auto_reply_needs_language", msg, "content")
    if p.name == DIRECTOR:
        trouble = state_format_problems(p.content)
        if trouble:
            yield _at(i, p, "director_state_format", trouble, "content")


# --- a loaded preset and its lookups ------------------------------------------------------


@dataclass(frozen=True)
class CharacterSlot:
    """Where a compiled character prompt goes (the seed's replacement rule): the whole
    ``roleplay`` prompt, or its one ``{{getvar::systemPrompt}}`` placeholder."""

    identifier: str
    kind: Literal["roleplay", "placeholder"]


Layout = Literal["cache_aware", "classic"]


@dataclass(frozen=True)
class LoadedPreset:
    """A preset's validated prompts and who it is: ``id`` None is the shipped default.

    What capabilities use: :meth:`named` (a role template), :meth:`actor_prompts` (the
    Actor's list in order), :meth:`character_slot`.
    """

    prompts: tuple[Prompt, ...]
    name: str
    id: str | None = None
    version: int = 0
    # History replies carry their reasoning (``roleplay.llm.reasoning.with_reasoning``).
    reasoning_in_prompt: bool = False

    @property
    def is_default(self) -> bool:
        return self.id is None

    def prompt(self, identifier: str) -> Prompt | None:
        return next((p for p in self.prompts if p.identifier == identifier), None)

    def named(self, name: str) -> Prompt:
        """The enabled prompt named ``name``; else :class:`NamedPromptMissing`."""
        return self.require(name)[name]

    def require(self, *names: str) -> dict[str, Prompt]:
        """Every named prompt of ``names`` at once; one error lists all that are missing or
        disabled (Agent V2 needs its six specialists and the director together)."""
        found = {p.name: p for p in self.prompts if p.name in names}
        absent = [n for n in names if n not in found]
        disabled = [n for n in names if n in found and not found[n].enabled]
        if absent or disabled:
            reason = "; ".join(
                part
                for part in (
                    "absent: " + ", ".join(absent) if absent else "",
                    "disabled: " + ", ".join(disabled) if disabled else "",
                )
                if part
            )
            raise NamedPromptMissing(self, absent + disabled, reason)
        return found

    def actor_prompts(self) -> list[Prompt]:
        """The enabled prompts that are Actor messages (relative or at a depth), in order."""
        return [p for p in self.prompts if p.enabled and p.placed]

    @property
    def layout(self) -> Layout:
        """``cache_aware`` when the Actor's list holds the enabled ``turnContext`` marker
        (the blocks that change from turn to turn go there), else ``classic`` (they go where
        each block asks, as before): see docs/prompt.md, "Cache-aware layout"."""
        enabled = (p.identifier == TURN_CONTEXT for p in self.actor_prompts())
        return "cache_aware" if any(enabled) else "classic"

    def character_slot(self) -> CharacterSlot:
        """The seed's rule: the one enabled ``roleplay`` prompt, else the one
        ``{{getvar::systemPrompt}}`` of the enabled Actor prompts (counted as occurrences,
        so one prompt holding it twice is ambiguous too). Otherwise
        :class:`CharacterSlotMissing`, whose ``problem`` says which way it fails: two
        ``roleplay`` prompts, several placeholders, or none of either. Never picks one."""
        actor = self.actor_prompts()
        named = [p for p in actor if p.name == ROLEPLAY]
        if len(named) == 1:
            return CharacterSlot(named[0].identifier, "roleplay")
        if named:
            reason = f"{len(named)} enabled prompts are named roleplay; the slot must be one"
            raise CharacterSlotMissing(self, "duplicate_roleplay", reason)
        counts = [(p, referenced_variables(p.content).count(SYSTEM_PROMPT_VARIABLE)) for p in actor]
        total = sum(n for _p, n in counts)
        if total == 1:
            return CharacterSlot(next(p for p, n in counts if n).identifier, "placeholder")
        if total > 1:
            reason = f"no roleplay prompt and {total} {{{{getvar::systemPrompt}}}} placeholders"
            raise CharacterSlotMissing(self, "ambiguous_placeholder", reason)
        reason = "no enabled roleplay prompt and no single {{getvar::systemPrompt}} placeholder"
        raise CharacterSlotMissing(self, "no_slot", reason)


def dump_prompts(prompts: Sequence[Prompt]) -> list[dict[str, Any]]:
    """The JSON stored in ``Preset.prompts`` and sent by the API."""
    return [p.model_dump(mode="json") for p in prompts]


__all__ = [
    "AUTO_REPLY",
    "AUXILIARY",
    "AtDepth",
    "CHAT_HISTORY",
    "COMPACTOR",
    "FRONT_CONTROLLER",
    "CharacterSlot",
    "CharacterSlotMissing",
    "Content",
    "DEFAULT_ORDER",
    "DIO_COMPILER",
    "DIRECTOR",
    "ENHANCE_DEFINITIONS",
    "IDENTIFIER_PATTERN",
    "Injection",
    "LANGUAGE_VARIABLE",
    "LoadedPreset",
    "MAIN",
    "MARKERS",
    "MARKER_FIELDS",
    "MAX_CONTENT_CHARS",
    "MAX_DEPTH",
    "MAX_IDENTIFIER_CHARS",
    "MAX_NAME_CHARS",
    "MAX_PROMPTS",
    "MAX_TOTAL_CHARS",
    "NAMED_PROMPTS",
    "Name",
    "NamedPromptMissing",
    "NotPlaced",
    "ORCHESTRATOR",
    "ORDER_LIMIT",
    "POSITIONS",
    "POST_HISTORY",
    "PROMPTS",
    "PresetInvalid",
    "Problem",
    "Prompt",
    "REQUIRED_MARKERS",
    "ROLEPLAY",
    "ROLES",
    "ROLE_TEMPLATES",
    "Relative",
    "SPECIALISTS",
    "SPECIALIST_TOOLS",
    "STORY_WRITER",
    "SlotProblem",
    "SYSTEM_PROMPT_VARIABLE",
    "TURN_CONTEXT",
    "USER_INPUT",
    "WORLD_INFO_MARKERS",
    "dump_prompts",
    "parse_prompts",
    "preset_problems",
    "validate_prompts",
]
