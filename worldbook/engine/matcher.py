"""Compiled keyword matching: one pass over a text finds every entry's primary and secondary hits.

A book revision is immutable, so we compile it once and cache the result by content hash. A
compiled book holds

* one Aho-Corasick automaton over the lower-cased plain keys of case-insensitive entries and
  one over the verbatim keys of case-sensitive entries: scanning costs one walk over the text
  however many entries there are, and work per hit is proportional to the entries that share
  that key, never to the size of the book. The automata are ``ahocorasick_rs`` contiguous
  NFAs: a revision's 20,000 keys take about 1.6 MB in one allocation (a node-per-object trie
  took 3.5 MB in 165,000), and a scan runs about three times faster;
* one RE2 set over every regex key, which reports in one pass which patterns occur.

A hit is recorded as an integer *posting code* (entry index, key index, primary/secondary
packed together) so the hot loop only does C-level ``set.update`` calls; decoding into
per-entry sets happens once, for the few entries that were hit.
"""

from __future__ import annotations

import re
import threading
from array import array
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from itertools import accumulate, chain, repeat

import ahocorasick_rs
import re2

from console.backtracking import Backtracking, TimedOut
from worldbook.engine.entry import SEP, Entry, compact, unpack
from worldbook.engine.gc_pause import paused_gc
from worldbook.engine.keys import (
    RegexKeyError,
    backtracking_key,
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


class _WordTable:
    """What each automaton word stands for, in flat arrays: an automaton reports only a word
    number (its pattern index plus the automaton's ``base``), and word ``k``'s plain codes are
    ``plain[plain_at[k]:plain_at[k + 1]]`` (likewise for whole-word codes). A revision's
    20,000 keys then cost a few arrays, not three tuples each."""

    __slots__ = ("plain_at", "plain", "whole_at", "whole")

    def __init__(self, plain_at: array, plain: array, whole_at: array, whole: array) -> None:
        self.plain_at, self.plain, self.whole_at, self.whole = plain_at, plain, whole_at, whole

    def __getstate__(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            setattr(self, name, value)


class _Automaton:
    """One automaton over ``words``, whose pattern ``i`` is word ``base + i`` of the table.

    ``ahocorasick_rs`` automata cannot be pickled: a compiled book pickles the words instead
    and rebuilds its automata when read back (about 30 ms for 20,000 keys)."""

    __slots__ = ("base", "_automaton")

    def __init__(self, base: int, words: list[str]) -> None:
        self.base = base
        try:
            # ahocorasick_rs silently drops every word from the first one UTF-8 cannot hold.
            "".join(words).encode("utf-8")
        except UnicodeEncodeError:  # a word with a lone surrogate: only in unstored books
            words = [_encodable(word) for word in words]
        self._automaton = ahocorasick_rs.AhoCorasick(
            words, implementation=ahocorasick_rs.Implementation.ContiguousNFA, store_patterns=False
        )

    def find(self, text: str) -> list[tuple[int, int, int]]:
        """(pattern index, start, end) of every occurrence, overlapping ones included."""
        try:
            return self._automaton.find_matches_as_indexes(text, overlapping=True)
        except UnicodeEncodeError:
            return self._automaton.find_matches_as_indexes(_encodable(text), overlapping=True)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _encodable(text: str) -> str:
    """``text`` with each lone surrogate (which UTF-8 cannot hold, and the automaton works
    on UTF-8) replaced by U+FFFD: one character for one, so positions stay the same. Stored
    books hold none; a request's text may, and then a key with a lone surrogate matches
    text with any lone surrogate in its place."""
    return _SURROGATE.sub("\ufffd", text)


def _automaton(base: int, words: list[str]) -> _Automaton | None:
    return _Automaton(base, words) if words else None


# Keys gathered for one automaton and one list (plain or whole-word): words and codes, flat.
_Keys = tuple[list[str], list[int]]


class _Gathered:
    """The keys of one automaton and one list, as gathered: whole key lists held joined
    (see :meth:`Entry.key_lists`), split in one call at the end, and single keys."""

    __slots__ = ("joined", "joined_codes", "words", "codes")

    def __init__(self) -> None:
        self.joined: list[str] = []
        self.joined_codes: list[int] = []
        self.words: list[str] = []
        self.codes: list[int] = []

    def keys(self, fold: bool) -> _Keys:
        """Every word (lower-cased if ``fold``) and its code."""
        joined = SEP.join(self.joined)
        if fold:
            joined = joined.lower()  # SEP is no cased letter: as if each key were lowered
            single = [word.lower() for word in self.words]
        else:
            single = self.words
        words = joined.split(SEP) if self.joined else []
        return words + single, self.joined_codes + self.codes


class _Plan:
    """What a revision's keys compile to: the automata's words, the table of what each word
    stands for, the regex keys with their codes, and the regex keys that failed to compile.

    Keys are gathered a list at a time (a list is held joined, see :meth:`Entry.key_lists`),
    lower-cased in one call per automaton and grouped by word mostly in C-level calls: it
    took half the compile time of a 5,000-entry revision when it went key by key."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.regex_codes: dict[str, list[int]] = {}
        # Regex keys only the backtracking engine runs (look-around...), by source likewise.
        self.backtracking_codes: dict[str, list[int]] = {}
        # Regex keys that failed to compile (only possible for unpublished books): never match.
        self.invalid_regex: list[tuple[int, str]] = []
        # (case sensitive, whole words) -> that list's keys.
        gathered = {(cased, whole): _Gathered() for cased in (0, 1) for whole in (0, 1)}
        shift = _KEY_BITS + 1
        for i, entry in enumerate(entries):
            cased, whole, *lists = entry.key_lists()
            into = gathered[cased, whole]
            base = i << shift  # encode() inlined: this runs for every list
            for packed in lists:
                if packed.__class__ is str and _plain_words(packed):
                    into.joined.append(packed)
                    into.joined_codes.extend(range(base, base + 2 * packed.count(SEP) + 2, 2))
                elif packed:
                    self._single_keys(i, base, unpack(packed), into)
                base |= 1  # then the secondary list
        self.folded = _words(gathered[0, 0].keys(True), gathered[0, 1].keys(True))
        self.verbatim = _words(gathered[1, 0].keys(False), gathered[1, 1].keys(False))
        self.table = _WordTable(
            *_offsets_and_codes(self.folded[1], self.verbatim[1]),
            *_offsets_and_codes(self.folded[2], self.verbatim[2]),
        )

    def _single_keys(self, i: int, base: int, keys: tuple[str, ...], into: _Gathered) -> None:
        """A list with an empty key (never matches), a regex key (recorded apart) or a key
        holding the separator: its plain keys one by one."""
        for k, key in enumerate(keys):
            code = base | (k << 1)
            if key and not (key[0] == "/" and self._regex(i, key, code)):
                into.words.append(key)
                into.codes.append(code)

    def _regex(self, i: int, key: str, code: int) -> bool:
        """Whether ``key`` is a regex key (then recorded here), not a plain one."""
        parsed = parse_regex_key(key)
        if parsed is None:
            return False
        try:
            compiled = compile_regex_key(parsed)
        except RegexKeyError:
            self.invalid_regex.append((i, key))
        else:
            linear = not isinstance(compiled, Backtracking)
            into = self.regex_codes if linear else self.backtracking_codes
            into.setdefault(parsed.source, []).append(code)
        return True


_SLASHED = SEP + "/"
_EMPTY_KEY = SEP + SEP


def _plain_words(packed: str) -> bool:
    """Whether a joined key list holds no empty key and nothing that may be a regex key."""
    return bool(
        packed
        and packed[0] != "/"
        and packed[0] != SEP
        and packed[-1] != SEP
        and _SLASHED not in packed
        and _EMPTY_KEY not in packed
    )


# One list's codes grouped by word: (per word, how many; the codes, word after word).
_Grouped = tuple[list[int], list[int]]


def _words(plain: _Keys, whole: _Keys) -> tuple[list[str], _Grouped, _Grouped]:
    """One automaton's words (each once, in order of first use) and both lists' codes
    grouped by word."""
    number: dict[str, int] = {}
    word_of = [number.setdefault(word, len(number)) for word in chain(plain[0], whole[0])]
    split = len(plain[0])
    return (
        list(number),
        _grouped(len(number), word_of[:split], plain[1]),
        _grouped(len(number), word_of[split:], whole[1]),
    )


def _grouped(words: int, word_of: list[int], codes: list[int]) -> _Grouped:
    """Per word (of ``words``), how many of ``codes`` it has, and the codes word after word.
    ``word_of[j]`` is code ``j``'s word."""
    if not codes:  # most books use one list only
        return [0] * words, codes
    tally = Counter(word_of)
    counts = list(map(tally.get, range(words), repeat(0)))
    if word_of == sorted(word_of):  # the common case: in word order already
        return counts, codes
    # A stable sort keeps each word's codes in key order.
    order = sorted(range(len(word_of)), key=word_of.__getitem__)
    return counts, list(map(codes.__getitem__, order))


def _offsets_and_codes(folded: _Grouped, verbatim: _Grouped) -> tuple[array, array]:
    """The word table's offsets and codes for one list, over the folded words then the
    verbatim ones. Codes fit 32 bits: 5,000 entries (the spec's maximum) need 13 of their
    23 entry bits."""
    offsets = list(accumulate(folded[0] + verbatim[0], initial=0))
    return array("i", offsets), array("i", folded[1] + verbatim[1])


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
        self.max_scan_depth_override = max(
            (e.scan_depth for e in self.entries if e.scan_depth is not None), default=-1
        )
        plan = _Plan(self.entries)
        self.invalid_regex = plan.invalid_regex
        self._words = plan.table
        folded, verbatim = plan.folded[0], plan.verbatim[0]
        self._folded = _automaton(0, folded)
        self._verbatim = _automaton(len(folded), verbatim)
        self._regex_sources: tuple[str, ...] = tuple(plan.regex_codes)
        self._regex_codes: list[tuple[int, ...]] = [tuple(c) for c in plan.regex_codes.values()]
        self._regex_set = _regex_set(self._regex_sources)
        self._backtracking_sources = tuple(plan.backtracking_codes)
        self._backtracking_codes = [tuple(c) for c in plan.backtracking_codes.values()]
        self._backtracking = _backtracking(self._backtracking_sources)

    # A compiled revision is written once to the shared store (``worldbook.compiled``) and
    # read by every process. Neither the automata nor the RE2 set can be pickled: the
    # automata's words (planned again from the entries) and the set's patterns are, and both
    # are rebuilt when read back.
    def __getstate__(self) -> dict:
        state = {name: getattr(self, name) for name in _STATE}
        state["_backtracking_sources"] = self._backtracking_sources
        state["_backtracking_codes"] = self._backtracking_codes
        plan = _Plan(self.entries)
        state["_folded"], state["_verbatim"] = plan.folded[0], plan.verbatim[0]
        return state

    def __setstate__(self, state: dict) -> None:
        for name in _STATE:
            setattr(self, name, state[name])
        folded, verbatim = state["_folded"], state["_verbatim"]
        self._folded = _automaton(0, folded)
        self._verbatim = _automaton(len(folded), verbatim)
        self._regex_set = _regex_set(self._regex_sources)
        # (a revision compiled before backtracking keys were kept has none)
        self._backtracking_sources = state.get("_backtracking_sources", ())
        self._backtracking_codes = state.get("_backtracking_codes", [])
        self._backtracking = _backtracking(self._backtracking_sources)

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
        for pattern, pattern_codes in zip(
            self._backtracking, self._backtracking_codes, strict=True
        ):
            try:
                if pattern.search(text) is not None:
                    codes.update(pattern_codes)
            except TimedOut:  # past its budget on this text: no match here
                continue
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
    "_regex_sources",
    "_regex_codes",
)


def _backtracking(sources: Sequence[str]) -> list[Backtracking]:
    return [backtracking_key(source) for source in sources]


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


def _collect(automaton: _Automaton, words: _WordTable, text: str, codes: set[int]) -> None:
    plain_at, plain, whole_at, whole = words.plain_at, words.plain, words.whole_at, words.whole
    base = automaton.base
    for k, begin, end in automaton.find(text):
        k += base
        start, stop = plain_at[k], plain_at[k + 1]
        if start != stop:
            codes.update(plain[start:stop])
        start, stop = whole_at[k], whole_at[k + 1]
        if start != stop and is_whole_word(text, begin, end):
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
