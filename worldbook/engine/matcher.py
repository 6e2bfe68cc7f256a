"""Compiled keyword matching: one pass over a text finds every entry's primary and secondary hits.

A book revision is immutable, so we compile it once and cache the result by content hash. A
compiled book holds

* one Aho-Corasick automaton over the lower-cased plain keys of case-insensitive entries and
  one over the verbatim keys of case-sensitive entries: scanning costs one walk over the text
  however many entries there are, and work per hit is proportional to the entries that share
  that key, never to the size of the book;
* one RE2 set over every regex key, which reports in one pass which patterns occur.

A hit is recorded as an integer *posting code* (entry index, key index, primary/secondary
packed together) so the hot loop only does C-level ``set.update`` calls; decoding into
per-entry sets happens once, for the few entries that were hit.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Sequence

import ahocorasick
import re2

from worldbook.engine.entry import Entry, compact
from worldbook.engine.gc_pause import paused_gc
from worldbook.engine.keys import (
    RegexKeyError,
    compile_regex_key,
    is_whole_word,
    parse_regex_key,
)
from worldbook.engine.schema import EntryIn

CACHE_SIZE = 64
_KEY_BITS = 8  # up to 256 keys per list; the schema allows 200
_KEY_MASK = (1 << _KEY_BITS) - 1


def encode(entry_index: int, key_index: int, secondary: bool) -> int:
    """Pack one (entry, key, list) posting into an int: cheap to hash and to collect in sets."""
    return (entry_index << (_KEY_BITS + 1)) | (key_index << 1) | int(secondary)


def decode(code: int) -> tuple[int, int, bool]:
    return code >> (_KEY_BITS + 1), (code >> 1) & _KEY_MASK, bool(code & 1)


def entry_of(code: int) -> int:
    return code >> (_KEY_BITS + 1)


class ScanHits:
    """Per-entry key hits: entry index -> indexes of the keys found (primary / secondary).

    Primary hits are decoded at once. Secondary hits are decoded on first use: over 20 full
    books a window hits thousands of secondary keys (common words), and most turns only ask
    about the secondary keys of the few entries whose primary keys were found."""

    __slots__ = ("primary", "_codes", "_secondary")

    def __init__(self, primary: dict[int, set[int]] | None = None, codes: Iterable[int] = ()):
        self.primary: dict[int, set[int]] = primary if primary is not None else {}
        self._codes = codes
        self._secondary: dict[int, set[int]] | None = None

    @property
    def secondary(self) -> dict[int, set[int]]:
        if self._secondary is None:
            self._secondary = _decode(code for code in self._codes if code & 1)
        return self._secondary

    @classmethod
    def from_codes(cls, codes: Iterable[int]) -> ScanHits:
        codes = codes if isinstance(codes, set | frozenset | list | tuple) else list(codes)
        return cls(_decode(code for code in codes if not code & 1), codes)


def _decode(codes: Iterable[int]) -> dict[int, set[int]]:
    """Entry index -> indexes of its keys among ``codes`` (all of one list)."""
    out: dict[int, set[int]] = {}
    shift = _KEY_BITS + 1
    for code in codes:  # decode() inlined: this loop runs for every hit of every scan
        entry, key = code >> shift, (code >> 1) & _KEY_MASK
        found = out.get(entry)
        if found is None:
            out[entry] = {key}
        else:
            found.add(key)
    return out


class _Postings:
    """Codes gathered for one automaton word before it is frozen into the automaton value."""

    __slots__ = ("plain", "whole")

    def __init__(self) -> None:
        self.plain: list[int] = []
        self.whole: list[int] = []


class _WordTable:
    """What each automaton word stands for, in flat arrays: the automata store only a word
    number (``STORE_INTS``, no Python object per word), and word ``k``'s plain codes are
    ``plain[plain_at[k]:plain_at[k + 1]]`` (likewise for whole-word codes). A revision's
    20,000 keys then cost a few arrays, not three tuples each."""

    __slots__ = ("lengths", "plain_at", "plain", "whole_at", "whole")

    def __init__(self) -> None:
        self.lengths = array("i")
        self.plain_at = array("q", [0])
        self.plain = array("q")
        self.whole_at = array("q", [0])
        self.whole = array("q")

    def add(self, word: str, postings: _Postings) -> int:
        self.lengths.append(len(word))
        self.plain.extend(postings.plain)
        self.plain_at.append(len(self.plain))
        self.whole.extend(postings.whole)
        self.whole_at.append(len(self.whole))
        return len(self.lengths) - 1

    def __getstate__(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            setattr(self, name, value)


def _build_automaton(
    words: dict[str, _Postings], table: _WordTable
) -> ahocorasick.Automaton | None:
    if not words:
        return None
    automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    for word, postings in words.items():
        automaton.add_word(word, table.add(word, postings))
    automaton.make_automaton()
    return automaton


class CompiledBook:
    """Everything keyword matching needs for one book revision, built once and shared."""

    def __init__(self, book_id: str, content_hash: str, entries: Sequence[EntryIn | Entry]) -> None:
        self.book_id = book_id
        self.content_hash = content_hash
        self.entries: tuple[Entry, ...] = tuple(compact(entries))
        self.ids: tuple[str, ...] = tuple(
            entry.id or f"entry-{i}" for i, entry in enumerate(self.entries)
        )
        self.titles: tuple[str, ...] = tuple(entry.title for entry in self.entries)
        self.index: dict[str, int] = {}
        for i, entry_id in enumerate(self.ids):
            self.index.setdefault(entry_id, i)
        # Regex keys that failed to compile (only possible for unpublished books): never match.
        self.invalid_regex: list[tuple[int, str]] = []
        self.max_scan_depth_override = max(
            (e.scan_depth for e in self.entries if e.scan_depth is not None), default=-1
        )
        folded: dict[str, _Postings] = {}
        verbatim: dict[str, _Postings] = {}
        regex_codes: dict[str, list[int]] = {}
        for i, entry in enumerate(self.entries):
            for secondary, keys in ((False, entry.keys), (True, entry.secondary_keys)):
                for k, key in enumerate(keys):
                    if not key:
                        continue
                    code = encode(i, k, secondary)
                    parsed = parse_regex_key(key)
                    if parsed is not None:
                        try:
                            compile_regex_key(parsed)
                        except RegexKeyError:
                            self.invalid_regex.append((i, key))
                            continue
                        regex_codes.setdefault(parsed.source, []).append(code)
                        continue
                    table, word = (verbatim, key) if entry.case_sensitive else (folded, key.lower())
                    postings = table.get(word)
                    if postings is None:
                        postings = table[word] = _Postings()
                    (postings.whole if entry.match_whole_words else postings.plain).append(code)
        self._words = _WordTable()
        self._folded = _build_automaton(folded, self._words)
        self._verbatim = _build_automaton(verbatim, self._words)
        self._regex_sources: tuple[str, ...] = tuple(regex_codes)
        self._regex_codes: list[tuple[int, ...]] = [tuple(c) for c in regex_codes.values()]
        self._regex_set = _regex_set(self._regex_sources)

    # A compiled revision is written once to the shared store (``worldbook.compiled``) and
    # read by every process: the automata pickle as they are, the RE2 set (which cannot be
    # pickled) is rebuilt from its patterns.
    def __getstate__(self) -> dict:
        state = {name: getattr(self, name) for name in _STATE}
        state["_regex_set"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        for name in _STATE:
            setattr(self, name, state[name])
        self._regex_set = _regex_set(self._regex_sources)

    def __len__(self) -> int:
        return len(self.entries)

    def scan_codes(self, text: str, lowered: str | None = None) -> set[int]:
        """Posting codes of every key occurring in ``text`` (pass ``lowered`` if you have it)."""
        codes: set[int] = set()
        if not text:
            return codes
        if self._folded is not None:
            low = text.lower() if lowered is None else lowered
            _collect(self._folded, self._words, low, codes)
        if self._verbatim is not None:
            _collect(self._verbatim, self._words, text, codes)
        if self._regex_set is not None:
            for pattern_index in self._regex_set.Match(text) or ():
                codes.update(self._regex_codes[pattern_index])
        return codes

    def scan(self, text: str) -> ScanHits:
        """Per-entry primary and secondary hits of ``text``, found in one pass."""
        return ScanHits.from_codes(self.scan_codes(text))


_STATE = (
    "book_id",
    "content_hash",
    "entries",
    "ids",
    "titles",
    "index",
    "invalid_regex",
    "max_scan_depth_override",
    "_words",
    "_folded",
    "_verbatim",
    "_regex_sources",
    "_regex_codes",
)


def _regex_set(sources: Sequence[str]) -> re2.Set | None:
    if not sources:
        return None
    options = re2.Options()
    options.log_errors = False
    regex_set = re2.Set.SearchSet(options)
    for source in sources:
        regex_set.Add(source)
    regex_set.Compile()
    return regex_set


def _collect(
    automaton: ahocorasick.Automaton, words: _WordTable, text: str, codes: set[int]
) -> None:
    plain_at, plain, whole_at, whole = words.plain_at, words.plain, words.whole_at, words.whole
    for end, k in automaton.iter(text):
        start, stop = plain_at[k], plain_at[k + 1]
        if start != stop:
            codes.update(plain[start:stop])
        start, stop = whole_at[k], whole_at[k + 1]
        if start != stop and is_whole_word(text, end - words.lengths[k] + 1, end + 1):
            codes.update(whole[start:stop])


_cache: OrderedDict[tuple[str, str], CompiledBook] = OrderedDict()
_cache_lock = threading.Lock()


def compile_book(
    book_id: str, content_hash: str, entries: Sequence[EntryIn | Entry]
) -> CompiledBook:
    """The compiled form of a revision, from an LRU cache keyed by (book id, content hash).

    The caller vouches that ``content_hash`` identifies ``entries``; revisions are immutable, so
    a hit is always current. Compilation happens outside the lock: two threads racing on the
    same revision both compile and the second result wins, which is harmless.
    """
    cache_key = (book_id, content_hash)
    with _cache_lock:
        hit = _cache.get(cache_key)
        if hit is not None and len(hit) == len(entries):
            _cache.move_to_end(cache_key)
            return hit
    with paused_gc():
        compiled = CompiledBook(book_id, content_hash, entries)
    with _cache_lock:
        _cache[cache_key] = compiled
        _cache.move_to_end(cache_key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled


def clear_cache() -> None:
    """Forget every compiled book (tests and memory pressure)."""
    with _cache_lock:
        _cache.clear()
