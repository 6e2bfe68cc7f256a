"""Running scripts: SillyTavern's ``runRegexScript`` and ``getRegexedString`` over RE2 (or,
for a pattern RE2 cannot run, a backtracking engine under a time budget: ``pattern``).

* **Replacement** follows JavaScript's string rules plus SillyTavern's: ``$$`` is ``$``,
  ``$&``, ``$0`` and ``{{match}}`` the whole match, ``$1``..``$99`` a group, ``$<name>`` a
  named group, `` $` `` / ``$'`` the text before / after; a group that did not take part is
  empty; a reference to a group the pattern lacks stays literal. Every inserted match or
  group has the script's ``trimStrings`` removed first (SillyTavern's ``filterString``);
  ``{{char}}``/``{{user}}`` (any macro given) are then filled in the result.
* ``g`` replaces every match, else the first; an empty match moves on one character.
* **Modes** (which scripts a call selects): ``stored`` (neither only-flag: what is stored),
  ``prompt`` (``promptOnly``: the prompt's copy of the history, never stored), ``display``
  (``markdownOnly``: what the page shows, never stored), ``world_info`` (not
  ``markdownOnly``: lore text is prompt text only, so an unflagged script applies too).
* **Depth** (0 = the newest message): a script runs when ``minDepth <= depth <= maxDepth``;
  ``None``/-1 is unbounded and a call without a depth skips the check (SillyTavern's rule).
* Each script's output is capped (:data:`MAX_OUTPUT_CHARS`): a script whose result would be
  larger leaves the text as it was and is named in the returned notes, and so is a
  backtracking pattern that runs over its time (``regex_script_timeout``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from console.backtracking import Backtracking, TimedOut

from .pattern import RUN_BUDGET_S, FindPattern, compile_find, parse_find_regex, timed_out
from .spec import (
    SUBSTITUTE_ESCAPED,
    SUBSTITUTE_NONE,
    RegexScriptError,
    ScriptSpec,
    parse_script,
)

Mode = Literal["stored", "prompt", "display", "world_info"]
MAX_OUTPUT_CHARS = 200_000
# A replacement's tokens, in JavaScript's order of precedence.
_TOKEN = re.compile(r"\$\$|\$&|\$`|\$'|\$<([^>]*)>|\$(\d{1,2})|\{\{match\}\}", re.IGNORECASE)
_MACRO = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
# Sample macro values a find pattern is checked with at save time (substituteRegex 1/2).
_SAMPLE_MACROS = {"char": "Character", "user": "User"}


@dataclass(frozen=True, slots=True)
class CompiledScript:
    """A script checked once: its spec and its parsed find pattern."""

    spec: ScriptSpec
    find: FindPattern

    def regex(self, macros: Mapping[str, str]):
        body = self.find.body
        if self.spec.substitute_regex != SUBSTITUTE_NONE:
            escape = self.spec.substitute_regex == SUBSTITUTE_ESCAPED
            body = _fill(body, macros, escape=escape)
        return compile_find(body, self.find.flags)


@dataclass
class Outcome:
    """The text after the scripts, and what was skipped (a script over the output cap, one
    whose filled-in pattern no longer compiles)."""

    text: str
    applied: list[str] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)


def compile_script(raw: Any) -> CompiledScript:
    """Parse and compile one script (a dict as SillyTavern writes it, or a spec); raises only
    :class:`RegexScriptError`. Scripts whose pattern takes macros are compiled with sample
    values, so an import reports a pattern that can never run."""
    spec = raw if isinstance(raw, ScriptSpec) else parse_script(raw)
    try:
        find = parse_find_regex(spec.find_regex)
    except RegexScriptError as exc:
        exc.details.setdefault("script", spec.script_name)
        raise
    compiled = CompiledScript(spec=spec, find=find)
    try:
        compiled.regex(_SAMPLE_MACROS)
    except RegexScriptError as exc:
        exc.details.setdefault("script", spec.script_name)
        raise
    return compiled


def run_script(script: CompiledScript, text: str, macros: Mapping[str, str] | None = None) -> str:
    """``text`` with ``script`` applied once (no filtering); raises :class:`RegexScriptError`
    (``regex_script_output_too_large``) when the result passes :data:`MAX_OUTPUT_CHARS`."""
    if not text:
        return text
    values = dict(macros or {})
    regex = script.regex(values)
    find = regex.match if script.find.sticky else regex.search
    if isinstance(regex, Backtracking):  # every match of this run within one time budget
        find = partial(_timed, find, time.monotonic() + RUN_BUDGET_S)
    out: list[str] = []
    size = 0
    last = 0
    pos = 0
    while pos <= len(text):
        match = find(text, pos)
        if match is None:
            break
        start, end = match.span()
        piece = text[last:start] + _replacement(script.spec, match, text, regex, values)
        size += len(piece)
        if size > MAX_OUTPUT_CHARS:
            raise RegexScriptError(
                "regex_script_output_too_large",
                f"the script's output passes {MAX_OUTPUT_CHARS} characters",
                script=script.spec.script_name,
            )
        out.append(piece)
        last = end
        if not script.find.every:
            break
        pos = end if end > start else end + 1
    if last == 0 and not out:
        return text
    result = "".join(out) + text[last:]
    if len(result) > MAX_OUTPUT_CHARS:
        raise RegexScriptError(
            "regex_script_output_too_large",
            f"the script's output passes {MAX_OUTPUT_CHARS} characters",
            script=script.spec.script_name,
        )
    return result


def _timed(find, deadline: float, text: str, pos: int):
    try:
        return find(text, pos, deadline)
    except TimedOut:
        raise timed_out() from None


def selected(spec: ScriptSpec, placement: int, mode: Mode, depth: int | None, edit: bool) -> bool:
    """Whether ``spec`` runs on text of ``placement`` in ``mode`` at ``depth``."""
    if spec.disabled or placement not in spec.placement:
        return False
    if edit and not spec.run_on_edit:
        return False
    if mode == "display":
        chosen = spec.markdown_only
    elif mode == "prompt":
        chosen = spec.prompt_only
    elif mode == "world_info":
        chosen = not spec.markdown_only
    else:
        chosen = not spec.markdown_only and not spec.prompt_only
    if not chosen:
        return False
    if depth is not None:
        if spec.min_depth is not None and depth < spec.min_depth:
            return False
        if spec.max_depth is not None and depth > spec.max_depth:
            return False
    return True


def apply_scripts(
    scripts: Iterable[CompiledScript],
    text: str,
    *,
    placement: int,
    mode: Mode = "stored",
    depth: int | None = None,
    edit: bool = False,
    macros: Mapping[str, str] | None = None,
) -> Outcome:
    """``text`` after every selected script in order (SillyTavern's ``getRegexedString``)."""
    outcome = Outcome(text=text)
    for script in scripts:
        if not selected(script.spec, placement, mode, depth, edit):
            continue
        try:
            outcome.text = run_script(script, outcome.text, macros)
        except RegexScriptError as exc:
            outcome.notes.append({"script": script.spec.script_name, "code": exc.code})
            continue
        outcome.applied.append(script.spec.script_name)
    return outcome


def _replacement(spec: ScriptSpec, match, text: str, regex, macros: Mapping[str, str]) -> str:
    groups = regex.groups
    names: dict[str, int] = dict(regex.groupindex)

    def trimmed(value: str | None) -> str:
        if not value:
            return ""
        for trim in spec.trim_strings:
            value = value.replace(_fill(trim, macros), "")
        return value

    def token(found: re.Match[str]) -> str:
        whole = found.group(0)
        if whole == "$$":
            return "$"
        if whole == "$&" or whole.lower() == "{{match}}":
            return trimmed(match.group(0))
        if whole == "$`":
            return text[: match.start()]
        if whole == "$'":
            return text[match.end() :]
        if found.group(1) is not None:
            if not names:
                return whole
            index = names.get(found.group(1))
            return trimmed(match.group(index)) if index is not None else ""
        return _numbered(found.group(2), groups, trimmed, match, whole)

    return _fill(_TOKEN.sub(token, spec.replace_string), macros)


def _numbered(digits: str, groups: int, trimmed, match, whole: str) -> str:
    """``$n``/``$nn`` as JavaScript reads it: two digits when that group exists, else one
    digit and a literal; ``$0`` is the whole match (SillyTavern's ``{{match}}``)."""
    if len(digits) == 2 and 1 <= int(digits) <= groups:
        return trimmed(match.group(int(digits)))
    first = int(digits[0])
    rest = digits[1:]
    if first == 0:
        return trimmed(match.group(0)) + rest
    if first <= groups:
        return trimmed(match.group(first)) + rest
    return whole


def _fill(text: str, macros: Mapping[str, str], *, escape: bool = False) -> str:
    """``{{name}}`` macros replaced by their values (unknown ones kept as written)."""
    if "{{" not in text or not macros:
        return text
    lowered = {key.lower(): value for key, value in macros.items()}

    def value(found: re.Match[str]) -> str:
        known = lowered.get(found.group(1).lower())
        if known is None:
            return found.group(0)
        return _js_escape(known) if escape else known

    return _MACRO.sub(value, text)


def _js_escape(value: str) -> str:
    return re.sub(r"[.*+?^${}()|[\]\\/]", lambda m: "\\" + m.group(0), value)


def compile_all(raws: Sequence[Any]) -> tuple[list[CompiledScript], list[dict[str, Any]]]:
    """Every script of ``raws`` that compiles, and a problem for each that does not
    (``{index, script, code, message, details}``): what an import reports."""
    good: list[CompiledScript] = []
    problems: list[dict[str, Any]] = []
    for index, raw in enumerate(raws):
        try:
            good.append(compile_script(raw))
        except RegexScriptError as exc:
            name = raw.get("scriptName") if isinstance(raw, dict) else None
            problems.append(
                {
                    "index": index,
                    "script": name if isinstance(name, str) else "",
                    "code": exc.code,
                    "message": exc.message,
                    "details": exc.details,
                }
            )
    return good, problems
