"""In-memory BM25 lexical index over the entries of one book revision.

Search results are for browsing and for hybrid recall, never the final model context, so
the index favours predictable ranking over linguistic cleverness:

* Latin and digit runs become lowercase words; there is no stemming, so "keys" and "key"
  are different words, as an operator typing a query expects.
* Chinese, Japanese and Korean text has no spaces, so it becomes overlapping character
  bigrams ("铜钥匙" -> "铜钥", "钥匙"). A query of a single CJK character falls back to
  unigrams, which every document also indexes under a separate prefix so that they never
  dilute bigram scores.

A revision is immutable, so a built index can be cached by the hash of its content and
reused by every search on that revision (see :func:`index_for`).
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import Counter, OrderedDict
from collections import _count_elements as _count_into  # type: ignore[attr-defined]
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import add

import numpy as np

from console.embedding.words import CJK_CHAR_RE, CJK_CLASS, TOKEN_RE, fold

EXCERPT_CHARS = 600
BM25_K1 = 1.2
BM25_B = 0.75
# Titles are short and chosen by the author to name the entry: a match there is worth more.
TITLE_WEIGHT = 2
CACHE_SIZE = 32

_WORD_RE = re.compile(rf"[^\W_{CJK_CLASS}]+")
# Spelled out rather than ``[...]+``, which the regex engine scans about twice as slowly.
_CJK_RUN_RE = re.compile(rf"[{CJK_CLASS}][{CJK_CLASS}]*")
# Every byte but an ASCII letter or digit, as a space: for ASCII text, ``[^\W_]`` is exactly
# the letters and digits, so its words are what ``split`` returns after the translation.
_ASCII_WORDS = bytes(c if c < 128 and chr(c).isalnum() else 0x20 for c in range(256))

_UNI = "u:"  # prefix of CJK unigram terms, kept apart from bigrams and words


@dataclass(frozen=True, slots=True)
class Term:
    """One token with where it occurs in the folded text (used for excerpts)."""

    value: str
    start: int
    end: int


def iter_terms(text: str, *, cjk_unigrams: bool) -> Iterable[Term]:
    """Yield words, CJK bigrams and (when asked, or for a lone CJK character) unigrams."""
    for match in TOKEN_RE.finditer(fold(text)):
        run = match.group()
        start = match.start()
        if match.lastgroup == "word":
            yield Term(run, start, match.end())
            continue
        if len(run) == 1 or cjk_unigrams:
            for offset, char in enumerate(run):
                yield Term(_UNI + char, start + offset, start + offset + 1)
        for offset in range(len(run) - 1):
            yield Term(run[offset : offset + 2], start + offset, start + offset + 2)


def document_terms(text: str) -> list[str]:
    """Terms a document is indexed under: words, CJK unigrams and CJK bigrams, in that order.

    The same bag of terms as ``iter_terms(text, cjk_unigrams=True)``, gathered with C-level
    scans instead of a Python loop over tokens, because building an index runs over every
    character of a revision. An ASCII text (``str.isascii`` is free) has no CJK, and its
    words are its runs of letters and digits: one byte translation and a split. Otherwise
    the words are a regex scan, and only a text that holds CJK is scanned for CJK runs,
    whose characters and overlapping pairs are the unigrams and bigrams
    (``tests/worldbook/engine/test_wb_prepare_fastpaths.py`` holds it equal to the plain
    three scans).
    """
    if text.isascii():
        return text.lower().encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    folded = fold(text)
    terms = _WORD_RE.findall(folded)
    if CJK_CHAR_RE.search(folded) is not None:
        runs = _CJK_RUN_RE.findall(folded)
        terms.extend(map(_UNI.__add__, "".join(runs)))
        for run in runs:
            terms.extend(map(add, run, run[1:]))
    return terms


def query_terms(text: str) -> list[str]:
    """Terms a query searches for: unigrams only where a CJK run is a single character."""
    return [term.value for term in iter_terms(text, cjk_unigrams=False)]


@dataclass(frozen=True, slots=True)
class Doc:
    """A searchable unit: usually one entry (``key`` = entry id) or one chunk of it."""

    key: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: a BM25 score and an excerpt of at most 600 characters."""

    key: str
    score: float
    excerpt: str


class LexicalIndex:
    """BM25 over a fixed list of documents; build once per revision, search many times.

    Per-term document weights are computed at build time, so a search is a sum over the
    postings of the query's few terms and stays in the millisecond range for 5,000 entries.
    """

    def __init__(
        self,
        docs: Sequence[Doc],
        terms: dict[str, int],
        offsets: np.ndarray,
        positions: np.ndarray,
        weights: np.ndarray,
    ):
        # Columns, not Doc objects: a cached index of 5,000 entries then adds three tuples
        # for the garbage collector to walk, not 5,000 objects.
        self._keys = tuple(doc.key for doc in docs)
        self._titles = tuple(doc.title for doc in docs)
        self._texts = tuple(doc.text for doc in docs)
        # The postings of every term in two flat arrays (term k's are ``offsets[k]`` to
        # ``offsets[k + 1]``, its documents in order): a search adds a whole posting in one
        # vector operation, and a revision's postings cost two arrays, not two per term.
        self._terms = terms
        self._offsets = offsets
        self._positions = positions
        self._weights = weights

    @classmethod
    def build(cls, docs: Sequence[Doc]) -> LexicalIndex:
        """The index of ``docs``: each document's term counts (title terms count
        :data:`TITLE_WEIGHT` times), then every posting's BM25 weight in whole-array steps.

        A term's number is the order in which it first occurs (documents in order, each
        document's terms as counted), and its posting lists its documents in order. The
        arithmetic is the per-posting formula's, operation for operation, so every weight is
        the same float (the idf is computed once per distinct document frequency with
        ``math.log``); ``tests/worldbook/engine/test_wb_prepare_fastpaths.py`` holds it
        equal to the formula applied posting by posting."""
        counts: list[dict[str, int]] = []
        for doc in docs:
            counter: dict[str, int] = {}
            _count_into(counter, document_terms(doc.text))  # Counter's own C loop
            if doc.title:
                for term in document_terms(doc.title):
                    counter[term] = counter.get(term, 0) + TITLE_WEIGHT
            counts.append(counter)
        total = len(counts)
        sizes = np.fromiter(map(len, counts), dtype=np.int64, count=total)
        found = int(sizes.sum())
        keys = list(chain.from_iterable(counts))
        terms = {term: k for k, term in enumerate(dict.fromkeys(keys))}
        ids = np.fromiter(map(terms.__getitem__, keys), dtype=np.int64, count=found)
        tf = np.fromiter(
            chain.from_iterable(c.values() for c in counts), dtype=np.float64, count=found
        )
        position = np.repeat(np.arange(total, dtype=np.int32), sizes)
        # Sums of whole counts: exact in floats, so the mean is the integer formula's.
        lengths = np.bincount(position, weights=tf, minlength=total)
        average = (float(lengths.sum()) / total) if total else 0.0
        df = np.bincount(ids, minlength=len(terms))
        idf_of = {d: math.log(1 + (total - d + 0.5) / (d + 0.5)) for d in set(df.tolist())}
        idf = np.array([idf_of[d] for d in df.tolist()], dtype=np.float64)
        if average:
            norm = BM25_K1 * ((1 - BM25_B) + BM25_B * lengths / average)
        else:
            norm = np.zeros(total, dtype=np.float64)
        weights = idf[ids] * tf * (BM25_K1 + 1) / (tf + norm[position])
        order = np.argsort(ids, kind="stable")
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(df, out=offsets[1:])
        return cls(docs, terms, offsets, position[order], weights[order])

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(document positions, BM25 weights) of ``term``, or None when no document has it."""
        k = self._terms.get(term)
        if k is None:
            return None
        start, end = self._offsets[k], self._offsets[k + 1]
        return self._positions[start:end], self._weights[start:end]

    def __len__(self) -> int:
        return len(self._keys)

    def rank(self, query: str | set[str], limit: int = 10) -> list[tuple[str, float]]:
        """``(key, score)`` of the documents ranked by BM25 for ``query`` (a text, or its
        ``set(query_terms(text))`` when ranking several indexes), best first; ties keep
        document order. What :meth:`search` returns, without the excerpts."""
        terms = set(query_terms(query)) if isinstance(query, str) else query
        keys = self._keys
        return [(keys[p], score) for p, score in self._ranked(terms, limit)]

    def search(self, query: str, limit: int = 10) -> list[Hit]:
        """Documents ranked by BM25 for ``query``, best first; ties keep document order."""
        terms = set(query_terms(query))
        hits = []
        for position, score in self._ranked(terms, limit):
            text = self._texts[position]
            source = text if text.strip() else self._titles[position]
            hits.append(Hit(self._keys[position], score, excerpt(source, terms)))
        return hits

    def _ranked(self, terms: set[str], limit: int) -> list[tuple[int, float]]:
        if limit <= 0:
            return []
        found = [k for k in map(self._terms.get, terms) if k is not None]
        if not found:
            return []
        # All the query's postings summed in one pass, term by term in a fixed order (a
        # document occurs once in a posting), so each sum adds up in the same order always.
        offsets, positions, weights = self._offsets, self._positions, self._weights
        spans = [(offsets[k], offsets[k + 1]) for k in found]
        scores = np.bincount(
            np.concatenate([positions[a:b] for a, b in spans]),
            np.concatenate([weights[a:b] for a, b in spans]),
            minlength=len(self._keys),
        )
        positive = np.flatnonzero(scores > 0)
        if len(positive) > limit:
            # The ``limit`` best, equal scores in document order: everything above the
            # limit-th score, then the earliest of those equal to it.
            values = scores[positive]
            kth = np.partition(values, len(values) - limit)[len(values) - limit]
            above = positive[values > kth]
            level = positive[values == kth][: limit - len(above)]
            positive = np.concatenate([above, level])
        order = positive[np.lexsort((positive, -scores[positive]))]
        rounded = [round(value, 6) for value in scores[order].tolist()]
        return list(zip(order.tolist(), rounded, strict=True))


def excerpt(text: str, terms: set[str], limit: int = EXCERPT_CHARS) -> str:
    """At most ``limit`` characters of ``text`` centred on its densest run of query terms.

    The window is the one covering the most distinct query terms (ties: the earliest); it is
    then centred on the span of those matches, so the operator sees the match in context.
    """
    if len(text) <= limit:
        return text
    matches = find_terms(fold(text), terms)
    if not matches:
        return text[:limit]
    best_left, best_right, best_distinct = 0, 0, 0
    window: Counter[str] = Counter()
    left = 0
    for right, term in enumerate(matches):
        window[term.value] += 1
        while term.end - matches[left].start > limit:
            gone = matches[left].value
            window[gone] -= 1
            if not window[gone]:
                del window[gone]
            left += 1
        if len(window) > best_distinct:
            best_left, best_right, best_distinct = left, right, len(window)
    span_start = matches[best_left].start
    span_end = matches[best_right].end
    centre = (span_start + span_end) // 2
    start = max(0, min(centre - limit // 2, len(text) - limit))
    return text[start : start + limit]


def find_terms(folded: str, terms: set[str], per_term: int = 2_000) -> list[Term]:
    """Occurrences of ``terms`` in already-folded text, sorted by position.

    Searches for the few query terms directly instead of tokenising the whole text, so an
    excerpt of a 200,000-character entry stays cheap; ``per_term`` bounds the work.
    """
    found: list[Term] = []
    for term in terms:
        if term.startswith(_UNI) or CJK_CHAR_RE.match(term):
            needle = term[len(_UNI) :] if term.startswith(_UNI) else term
            start = folded.find(needle)
            count = 0
            while start != -1 and count < per_term:
                found.append(Term(term, start, start + len(needle)))
                start = folded.find(needle, start + 1)
                count += 1
            continue
        pattern = _whole_word(term)
        for count, match in enumerate(pattern.finditer(folded)):
            if count >= per_term:
                break
            found.append(Term(term, match.start(), match.end()))
    found.sort(key=lambda item: (item.start, item.end))
    return found


@lru_cache(maxsize=1024)
def _whole_word(word: str) -> re.Pattern[str]:
    edge = rf"[^\W_{CJK_CLASS}]"
    return re.compile(rf"(?<!{edge}){re.escape(word)}(?!{edge})")


def docs_content_hash(docs: Iterable[Doc]) -> str:
    """A SHA-256 over every document's key, title and text, framed so fields cannot blur."""
    digest = hashlib.sha256()
    for doc in docs:
        for part in (doc.key, doc.title, doc.text):
            encoded = part.encode("utf-8", "surrogatepass")
            digest.update(len(encoded).to_bytes(8, "big"))
            digest.update(encoded)
    return digest.hexdigest()


class IndexCache:
    """A small thread-safe LRU of built indexes keyed by content hash."""

    def __init__(self, maxsize: int = CACHE_SIZE):
        self.maxsize = maxsize
        self._items: OrderedDict[str, LexicalIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_build(
        self, content_hash: str, docs: Sequence[Doc] | Callable[[], Sequence[Doc]]
    ) -> LexicalIndex:
        """``docs`` may be a function that makes them: called only when the index is built."""
        with self._lock:
            cached = self._items.get(content_hash)
            if cached is not None:
                self._items.move_to_end(content_hash)
                return cached
        built = LexicalIndex.build(docs() if callable(docs) else docs)
        with self._lock:
            self._items[content_hash] = built
            self._items.move_to_end(content_hash)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return built

    def __contains__(self, content_hash: object) -> bool:
        with self._lock:
            return content_hash in self._items

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


DEFAULT_CACHE = IndexCache()


def index_for(
    docs: Sequence[Doc] | Callable[[], Sequence[Doc]],
    *,
    content_hash: str | None = None,
    cache: IndexCache | None = None,
) -> LexicalIndex:
    """The cached index of ``docs``, building it on first use.

    Callers that already know the revision's content hash pass it to skip hashing the text,
    and may pass a function that makes the docs, so a cached index costs no list of docs.
    """
    if content_hash is None:
        made = docs() if callable(docs) else docs
        return (cache or DEFAULT_CACHE).get_or_build(docs_content_hash(made), made)
    key = content_hash
    return (cache or DEFAULT_CACHE).get_or_build(key, docs)
