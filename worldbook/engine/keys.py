"""Keyword primitives shared by publish validation, the compiled matcher and the naive baseline.

Two concerns live here because all three callers must agree on them exactly:

* **Regex keys.** SillyTavern lets a key be written ``/pattern/flags``. We accept the same
  spelling and compile it with RE2 (linear time, no catastrophic backtracking); a key that
  needs look-around or back-references is compiled by the backtracking engine instead
  (``console.backtracking``), each search of it bounded by :data:`KEY_BUDGET_S` (past it the
  key does not match that text). Only a key neither engine compiles is rejected at publish.
* **Whole-word boundaries.** ``\\b`` is useless for Chinese and Japanese, which have no spaces.
  We classify characters into word classes and call a position a boundary when the class
  changes. Han text is the exception: a run of Han characters has no visible word breaks, so a
  Han key edge never requires a boundary (whole-word has no effect on Han keys).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import re2

from console.backtracking import Backtracking, compile_backtracking, error_text

MAX_REGEX_LENGTH = 500
KEY_BUDGET_S = 0.01  # one backtracking key over one scanned text

# ``/pattern/flags`` as SillyTavern parses it (``parseRegexFromString``): a non-empty body and
# only JavaScript flag letters after the closing slash.
_REGEX_KEY = re.compile(r"^/([\s\S]+?)/([gimsuy]*)$")
_UNESCAPED_SLASH = re.compile(r"(^|[^\\])/")

# Flags RE2 understands inline; the other JavaScript flags (g, u, y) change nothing for a
# yes/no "does it occur" test, so they are accepted and ignored.
_INLINE_FLAGS = {"i": "i", "s": "s", "m": "m"}

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


@dataclass(frozen=True, slots=True)
class RegexKey:
    """A parsed ``/pattern/flags`` key: the RE2 source (inline flags applied) and the original."""

    raw: str
    pattern: str
    flags: str

    @property
    def source(self) -> str:
        inline = "".join(sorted({_INLINE_FLAGS[f] for f in self.flags if f in _INLINE_FLAGS}))
        return f"(?{inline}){self.pattern}" if inline else self.pattern


class RegexKeyError(ValueError):
    """A key looks like a regex but RE2 cannot (or must not) compile it."""


def parse_regex_key(key: str) -> RegexKey | None:
    """The regex behind ``/pattern/flags``, or ``None`` when ``key`` is a plain key.

    Like SillyTavern, a body containing an unescaped ``/`` is not a regex (so a plain key such as
    ``/a/b/`` stays plain); escaped slashes are unescaped.
    """
    match = _REGEX_KEY.match(key)
    if match is None:
        return None
    pattern, flags = match.group(1), match.group(2)
    if _UNESCAPED_SLASH.search(pattern):
        return None
    return RegexKey(raw=key, pattern=pattern.replace("\\/", "/"), flags=flags)


def compile_regex_key(key: RegexKey) -> re2._Regexp | Backtracking:
    """Compile with RE2, else with the backtracking engine, enforcing the pattern length
    limit; raises :class:`RegexKeyError`."""
    if len(key.pattern) > MAX_REGEX_LENGTH:
        raise RegexKeyError(f"pattern longer than {MAX_REGEX_LENGTH} characters")
    try:
        return re2.compile(key.source, _RE2_OPTIONS)
    except re2.error as exc:
        linear = error_text(exc)
    try:
        return backtracking_key(key.source)
    except ValueError as exc:
        raise RegexKeyError(f"{linear}; {exc}") from exc


@lru_cache(maxsize=4096)
def backtracking_key(source: str) -> Backtracking:
    """A key RE2 cannot run, compiled once a process (its timeouts counted across books)."""
    return compile_backtracking(source, source, 0, KEY_BUDGET_S)


# --- word classes -------------------------------------------------------------------------

HAN = "han"
KANA = "kana"
HANGUL = "hangul"
WORD = "word"

_HAN_RANGES = (
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x3FFFF),  # Extensions B and later
    (0x3005, 0x3007),  # 々 〆 〇
)
_KANA_RANGES = (
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana (includes the prolonged sound mark)
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0xFF66, 0xFF9F),  # Halfwidth katakana
)
_HANGUL_RANGES = (
    (0x1100, 0x11FF),
    (0x3130, 0x318F),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7AF),
    (0xD7B0, 0xD7FF),
)


def _in(ranges: tuple[tuple[int, int], ...], code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in ranges)


@lru_cache(maxsize=8192)
def word_class(char: str) -> str | None:
    """The script class of a word character, or ``None`` for spaces and punctuation."""
    code = ord(char)
    if code < 0x80:
        return WORD if (char.isalnum() or char == "_") else None
    if _in(_HAN_RANGES, code):
        return HAN
    if _in(_KANA_RANGES, code):
        return KANA
    if _in(_HANGUL_RANGES, code):
        return HANGUL
    return WORD if (char.isalnum() or char == "_") else None


def is_whole_word(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands as a whole word in ``text``.

    Each edge is checked on its own: it is a boundary when the key's edge character is not a
    word character, or is Han (Han text has no word breaks to honour), or when the neighbour
    outside the match belongs to a different class (or is absent).
    """
    if end <= start:
        return False
    return _edge_ok(text[start], text[start - 1] if start > 0 else None) and _edge_ok(
        text[end - 1], text[end] if end < len(text) else None
    )


def _edge_ok(edge: str, neighbour: str | None) -> bool:
    edge_class = word_class(edge)
    if edge_class is None or edge_class == HAN or neighbour is None:
        return True
    return word_class(neighbour) != edge_class


def find_plain(text: str, key: str, whole_words: bool) -> bool:
    """Plain substring test with optional whole-word boundaries (used by the naive baseline)."""
    if not key:
        return False
    start = text.find(key)
    while start != -1:
        if not whole_words or is_whole_word(text, start, start + len(key)):
            return True
        start = text.find(key, start + 1)
    return False
