"""``findRegex`` to a compiled pattern: RE2 when it can run it, else a backtracking one
under a time limit.

SillyTavern reads ``/pattern/flags`` (the last slash closes the body; any other text is a
pattern with no flags) and builds a JavaScript ``RegExp``. We compile the same body with RE2,
which runs in time linear in the text, so no pattern can backtrack catastrophically. What
RE2 cannot run (look-around, back-references: common in SillyTavern's scripts) is compiled
by the ``regex`` module instead (:class:`Backtracking`), and each run of it is bounded in
time (:data:`RUN_BUDGET_S`); a run over its time leaves the text unchanged
(``regex_script_timeout``), and a pattern that ran over :data:`MAX_TIMEOUTS` times is not run
again by this process. Only a pattern neither engine compiles is refused
(``regex_script_unsupported``), when the script is imported or saved, never at a turn.
JavaScript flags: ``g`` (every match instead of the first), ``i``, ``m``, ``s``, ``u``
(always on: both engines work on code points), ``y`` (sticky: matches must start where the
previous one ended, the first at 0). Other flags (``d``, ``v``...) are refused."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import re2
import regex

from .spec import MAX_FIND_CHARS, RegexScriptError

SUPPORTED_FLAGS = frozenset("gimsuy")
_INLINE = {"i": "i", "m": "m", "s": "s"}
# JavaScript escapes RE2 spells differently: ``\uXXXX``, ``\u{X...}`` and ``\/``.
_JS_UNICODE = re.compile(r"(\\\\)|\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})|\\/")
_JS_NAMED_BACKREFERENCE = re.compile(r"(\\\\)|\\k<([A-Za-z_]\w*)>")
# What only a backtracking engine runs: look-around (group 2) and back-references.
_BACKTRACKING_ONLY = re.compile(r"(\\\\)|(\(\?<?[=!])|\\[1-9][0-9]*|\\k<[A-Za-z_]\w*>")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
# RE2's own bound on the compiled program (bytes): a huge repetition is refused, not built.
_OPTIONS.max_mem = 8 << 20
_BACKTRACKING_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL}
RUN_BUDGET_S = 0.05  # one script over one text, every match of ``g`` included
MAX_TIMEOUTS = 3  # runs over their time before this process stops running the pattern


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


class Backtracking:
    """A pattern RE2 cannot run, compiled by ``regex``: ``search``/``match`` as RE2's take a
    ``deadline`` (``time.monotonic()``) and raise ``regex_script_timeout`` past it."""

    __slots__ = ("groupindex", "groups", "pattern", "timeouts")

    def __init__(self, pattern: regex.Pattern) -> None:
        self.pattern = pattern
        self.groups = pattern.groups
        self.groupindex = dict(pattern.groupindex)
        self.timeouts = 0  # runs over their time so far (in this process)

    def search(self, text: str, pos: int, deadline: float | None = None):
        return self._run(self.pattern.search, text, pos, deadline)

    def match(self, text: str, pos: int, deadline: float | None = None):
        return self._run(self.pattern.match, text, pos, deadline)

    def _run(self, find, text: str, pos: int, deadline: float | None):
        left = RUN_BUDGET_S if deadline is None else deadline - time.monotonic()
        if self.timeouts >= MAX_TIMEOUTS or left <= 0:
            raise _timeout()
        try:
            return find(text, pos, timeout=left)
        except TimeoutError:
            self.timeouts += 1
            raise _timeout() from None


def _timeout() -> RegexScriptError:
    return RegexScriptError(
        "regex_script_timeout",
        f"the pattern ran longer than {RUN_BUDGET_S * 1000:g} ms on this text; it was skipped",
    )


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
    try:
        # Its size is RE2's to bound: the pattern with look-arounds read as plain groups and
        # back-references left out must be one RE2 compiles (a nested repetition is not).
        re2.compile(_BACKTRACKING_ONLY.sub(_as_linear, source), _OPTIONS)
        return _backtracking(body, flags)
    except (re2.error, regex.error, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise RegexScriptError(
            "regex_script_unsupported",
            f"the pattern is malformed or too large: {_said(linear)}; {_said(exc)}",
            field="findRegex",
        ) from exc


def _as_linear(found: re.Match[str]) -> str:
    return found.group(1) or ("(?:" if found.group(2) else "")


def _said(exc: BaseException) -> str:
    detail = exc.args[0] if exc.args else exc
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)


def _backtracking(body: str, flags: str) -> Backtracking:
    options = regex.V0
    for flag in flags:
        options |= _BACKTRACKING_FLAGS.get(flag, 0)
    return Backtracking(regex.compile(_js_to_python(body), options))


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
