"""Detection of dynamic content that needs a runtime this product does not run.

SillyTavern cards often carry more than static lore: EJS templates, MVU state updates,
STscript, HTML/JS panels, character-generation protocols. Injected as plain text they would
confuse the model, so such entries get ``runtime_requirements`` and the selector excludes
them by default; operators see them in the report and decide whether to rewrite them.

Sticky, cooldown, delay and inclusion groups are *not* listed: our selector executes them.
Plain ``{{char}}``/``{{user}}`` are substituted at selection. Other macros are reported as
lossy (they will reach the model unexpanded) but do not block the entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

EJS = "ejs"
MVU = "mvu"
SCRIPT = "script"
CHARINFO = "charinfo"

_VARIABLE_MACROS = (
    "setvar|getvar|addvar|incvar|decvar|flushvar|"
    "setglobalvar|getglobalvar|addglobalvar|incglobalvar|decglobalvar|flushglobalvar"
)
# STscript commands that only make sense when executed, matched at the start of a line.
_SLASH_COMMANDS = (
    "run|setvar|getvar|addvar|incvar|decvar|flushvar|setglobalvar|getglobalvar|inject|"
    "send|sendas|sys|gen|genraw|trigger|echo|if|while|times|qr|closure"
)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (EJS, re.compile(r"<%[\s\S]*?%>")),
    (MVU, re.compile(r"<\s*/?\s*UpdateVariable\b", re.IGNORECASE)),
    (MVU, re.compile(r"\b_\.(?:set|add|insert|remove|assign|delete)\s*\(")),
    (MVU, re.compile(rf"\{{\{{\s*(?:{_VARIABLE_MACROS})\s*::", re.IGNORECASE)),
    (SCRIPT, re.compile(r"<\s*script\b", re.IGNORECASE)),
    (SCRIPT, re.compile(r"\{\{\s*//")),
    (SCRIPT, re.compile(rf"^[ \t]*/(?:{_SLASH_COMMANDS})(?=[ \t|]|$)", re.MULTILINE)),
    (CHARINFO, re.compile(r"<\s*/?\s*CharInfo\b", re.IGNORECASE)),
)
_STYLE = re.compile(r"<\s*style\b", re.IGNORECASE)
# A <style> block is a front-end panel when the same entry also wires up behaviour.
_JS_HINTS = re.compile(
    r"\bon[a-z]+\s*=\s*[\"']|javascript:|\bdocument\.|\bwindow\.|addEventListener|=>\s*\{",
    re.IGNORECASE,
)

_MACRO = re.compile(r"\{\{\s*([A-Za-z_][\w-]*)")
# Substituted at selection time, or already reported as runtime requirements above.
_HANDLED_MACROS = frozenset({"char", "user"}) | frozenset(_VARIABLE_MACROS.split("|"))


# Every pattern above needs one of these characters: a text without any needs no runtime.
_ANY_MARK = re.compile(r"[<_{/]")


def runtime_requirements(texts: Iterable[str]) -> list[str]:
    """Sorted runtime names (``ejs``, ``mvu``, ``script``, ``charinfo``) the texts need."""
    found: set[str] = set()
    for text in texts:
        if not text or not _ANY_MARK.search(text):
            continue
        for name, pattern in _PATTERNS:
            if name not in found and pattern.search(text):
                found.add(name)
        if SCRIPT not in found and _STYLE.search(text) and _JS_HINTS.search(text):
            found.add(SCRIPT)
    return sorted(found)


def unexpanded_macros(text: str) -> list[str]:
    """ST macros other than ``{{char}}``/``{{user}}`` that will reach the model as written."""
    names = {match.group(1).lower() for match in _MACRO.finditer(text)}
    return sorted(names - _HANDLED_MACROS)
