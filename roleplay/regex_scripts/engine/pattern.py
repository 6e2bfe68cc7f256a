"""``findRegex`` to a compiled pattern: RE2 when it can run it, else a backtracking one
under a time limit.

SillyTavern reads ``/pattern/flags`` (the last slash closes the body; any other text is a
pattern with no flags) and builds a JavaScript ``RegExp``. We compile the same body with RE2,
which runs in time linear in the text, so no pattern can backtrack catastrophically. What
RE2 cannot run (look-around, back-references: common in SillyTavern's scripts) is compiled
by the ``regex`` module instead (``console.backtracking``), and each run of it is bounded in
time (:data:`RUN_BUDGET_S`); a run over its time leaves the text unchanged
(``regex_script_timeout``), and a pattern that ran out of time three times is not run again
by this process. Only a pattern neither engine compiles is refused
(``regex_script_unsupported``), when the script is imported or saved, never at a turn.
JavaScript flags: ``g`` (every match instead of the first), ``i``, ``m``, ``s``, ``u``
(always on: both engines work on code points), ``y`` (sticky: matches must start where the
previous one ended, the first at 0). Other flags (``d``, ``v``...) are refused."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import re2

from console import backtracking
from console.backtracking import Backtracking, compile_backtracking, error_text

from .spec import MAX_FIND_CHARS, RegexScriptError

SUPPORTED_FLAGS = frozenset("gimsuy")
_INLINE = {"i": "i", "m": "m", "s": "s"}
# JavaScript escapes RE2 spells differently: ``\uXXXX``, ``\u{X...}`` and ``\/``.
_JS_UNICODE = re.compile(r"(\\\\)|\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})|\\/")
_JS_NAMED_BACKREFERENCE = re.compile(r"(\\\\)|\\k<([A-Za-z_]\w*)>")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
# RE2's own bound on the compiled program (bytes): a huge repetition is refused, not built.
_OPTIONS.max_mem = 8 << 20
RUN_BUDGET_S = 0.05  # one script over one text, every match of ``g`` included


@dataclass(frozen=True, slots=True)
class FindPattern:
    """A parsed ``findRegex``: the body as written and its flags."""

    body: str
    flags: str

    @property
    def every(self) -> bool:
        return "g" in self.flags

    @property
    def sticky(self) -> bool:
        return "y" in self.flags


def parse_find_regex(text: str) -> FindPattern:
    """``/body/flags`` (or a bare pattern) as a :class:`FindPattern`; raises
    :class:`RegexScriptError` (``regex_script_invalid`` / ``regex_script_unsupported``)."""
    if not isinstance(text, str) or not text.strip():
        raise RegexScriptError("regex_script_invalid", "findRegex is empty", field="findRegex")
    if len(text) > MAX_FIND_CHARS:
        raise RegexScriptError(
            "regex_script_invalid",
            f"findRegex is longer than {MAX_FIND_CHARS} characters",
            field="findRegex",
        )
    trimmed = text.strip()
    last = trimmed.rfind("/")
    if not trimmed.startswith("/") or last <= 0:
        return FindPattern(body=text, flags="")
    body, flags = trimmed[1:last], trimmed[last + 1 :]
    if not body:
        raise RegexScriptError("regex_script_invalid", "findRegex is empty", field="findRegex")
    if not flags.isalpha() and flags:
        return FindPattern(body=text, flags="")  # "/a/b c": not a /pattern/flags spelling
    unsupported = sorted(set(flags) - SUPPORTED_FLAGS)
    repeated = sorted({f for f in flags if flags.count(f) > 1})
    if unsupported or repeated:
        raise RegexScriptError(
            "regex_script_unsupported",
            f"flags {''.join(unsupported + repeated)!r} are not supported (use g i m s u y once)",
            field="findRegex",
            flags=flags,
        )
    return FindPattern(body=body, flags=flags)


@lru_cache(maxsize=512)
def compile_find(body: str, flags: str) -> re2._Regexp | Backtracking:
    """RE2 for a JavaScript body with ``flags``, else :class:`Backtracking`;
    :class:`RegexScriptError` when neither engine compiles it."""
    inline = "".join(sorted({_INLINE[f] for f in flags if f in _INLINE}))
    source = _js_to_re2(body)
    if inline:
        source = f"(?{inline}){source}"
    try:
        return re2.compile(source, _OPTIONS)
    except (re2.error, ValueError, TypeError, OverflowError) as exc:
        linear = exc
    options = 0
    for flag in flags:
        options |= backtracking.FLAGS.get(flag, 0)
    try:
        return compile_backtracking(source, _js_to_python(body), options, RUN_BUDGET_S)
    except ValueError as exc:
        raise RegexScriptError(
            "regex_script_unsupported",
            f"the pattern is malformed or too large: {error_text(linear)}; {exc}",
            field="findRegex",
        ) from exc


def timed_out() -> RegexScriptError:
    """What a script whose backtracking pattern ran out of time reports."""
    return RegexScriptError(
        "regex_script_timeout",
        f"the pattern ran longer than {RUN_BUDGET_S * 1000:g} ms on this text; it was skipped",
    )


def _js_to_re2(body: str) -> str:
    return _translated(body, lambda code: "\\x{" + code + "}")


def _js_to_python(body: str) -> str:
    """Also a named back-reference, ``\\k<name>`` in JavaScript, ``(?P=name)`` here."""
    body = _translated(body, lambda code: f"\\U{int(code, 16):08X}")
    return _JS_NAMED_BACKREFERENCE.sub(lambda m: m.group(1) or f"(?P={m.group(2)})", body)


def _translated(body: str, unicode: Callable[[str], str]) -> str:
    """JavaScript's escapes the engine spells differently: ``\\uXXXX`` and ``\\u{X...}`` as
    ``unicode`` writes a code point, ``\\/`` as ``/``."""

    def convert(match: re.Match[str]) -> str:
        if match.group(1):
            return match.group(1)
        if match.group(0) == "\\/":
            return "/"
        return unicode(match.group(2) or match.group(3))

    return _JS_UNICODE.sub(convert, body)
