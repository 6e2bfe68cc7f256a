"""``findRegex`` to a compiled RE2 pattern.

SillyTavern reads ``/pattern/flags`` (the last slash closes the body; any other text is a
pattern with no flags) and builds a JavaScript ``RegExp``. We compile the same body with RE2,
which runs in time linear in the text, so no pattern can backtrack catastrophically; what
RE2 cannot run (look-around, back-references) is refused with ``regex_script_unsupported``
when the script is imported or saved, never at a turn. JavaScript flags: ``g`` (every match
instead of the first), ``i``, ``m``, ``s`` (inline RE2 flags), ``u`` (always on: RE2 works on
code points), ``y`` (sticky: matches must start where the previous one ended, the first at
0). Other flags (``d``, ``v``...) are refused."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import re2

from .spec import MAX_FIND_CHARS, RegexScriptError

SUPPORTED_FLAGS = frozenset("gimsuy")
_INLINE = {"i": "i", "m": "m", "s": "s"}
# JavaScript escapes RE2 spells differently: ``\uXXXX``, ``\u{X...}`` and ``\/``.
_JS_UNICODE = re.compile(r"(\\\\)|\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})|\\/")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
# RE2's own bound on the compiled program (bytes): a huge repetition is refused, not built.
_OPTIONS.max_mem = 8 << 20


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
def compile_find(body: str, flags: str) -> re2._Regexp:
    """RE2 for a JavaScript body with ``flags``; :class:`RegexScriptError` when RE2 refuses."""
    inline = "".join(sorted({_INLINE[f] for f in flags if f in _INLINE}))
    source = _js_to_re2(body)
    if inline:
        source = f"(?{inline}){source}"
    try:
        return re2.compile(source, _OPTIONS)
    except (re2.error, ValueError, TypeError, OverflowError) as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise RegexScriptError(
            "regex_script_unsupported",
            f"the pattern cannot run in linear time or is malformed: {detail}",
            field="findRegex",
        ) from exc


def _js_to_re2(body: str) -> str:
    def convert(match: re.Match[str]) -> str:
        if match.group(1):
            return match.group(1)
        if match.group(0) == "\\/":
            return "/"
        return "\\x{" + (match.group(2) or match.group(3)) + "}"

    return _JS_UNICODE.sub(convert, body)
