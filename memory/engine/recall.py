"""Recall's pure parts: chunking a message, the lexical forms PostgreSQL ranks, and blending.

- A message longer than :data:`CHUNK_CHARS` is indexed as overlapping chunks; a hit on any
  chunk is a hit on its message.
- The lexical side uses the worldbook engine's terms (words, CJK bigrams and unigrams), so
  Chinese and Japanese text is searchable without a dictionary. PostgreSQL stores them as a
  ``tsvector`` written literally (no parser of its own in between, so a CJK bigram stays a
  bigram) with each term's positions, and the rows are ranked by BM25 with the player's own
  term statistics (``idf``, :func:`candidate_terms`). Latin words are reduced to their
  English Snowball stem ("volunteering" and "volunteer" meet), unlike the worldbook's
  browsing index: a memory is asked for in other words than it was said in.
- The hybrid score blends the lexical rank (normalised by the best of the candidates) with
  the vector similarity, as the worldbook's hybrid search does.
"""

from __future__ import annotations

import math
import re
import threading
from collections import defaultdict
from functools import lru_cache

import snowballstemmer

from console.embedding.words import CJK_CHAR_RE
from console.search.lexical import document_terms, query_terms

CHUNK_CHARS, CHUNK_OVERLAP = 1200, 150
MAX_POSITION = 16383  # PostgreSQL's largest tsvector position
MAX_POSITIONS = 256  # and how many it keeps per lexeme
MAX_LEXEME_BYTES = 2046
MAX_QUERY_TERMS = 64
# The vector side's weight in the blend, by embedder: a sentence model brings meaning
# ("hate" near "never been able to eat"); the hashing embedder is itself a bag of word
# pieces and adds little to BM25. Measured on the synthetic LoCoMo set (``bench_memory``)
# with the cosine min-max normalised: 0.5 → recall@10 0.656, 0.65 → 0.733, 0.7 → 0.750,
# 0.8 → 0.793 but recall@5 0.394 and MRR 0.362; 0.7 keeps @5 at 0.458.
VECTOR_WEIGHTS = {
    "all-minilm-l6-v2": 0.7,
    "all-minilm-l6-v2-int8": 0.7,  # the same model, its dense weights in 8 bits
    "multilingual-e5-small-q4": 0.7,
}
VECTOR_WEIGHT = 0.2
K1, B = 1.2, 0.75  # BM25's term-frequency saturation and length normalisation
# Rows are gathered by the query's rarer terms only: a term in more than this share of the
# player's rows (and more than the floor) weighs little and would gather most of them.
CANDIDATE_SHARE, CANDIDATE_FLOOR, CANDIDATE_MIN_TERMS = 0.05, 64, 2
# And by no more of them than together gather about this many rows (rarest first, always at
# least one): each gathered row is read and scored, so a long owner's query of several
# middling terms would otherwise read thousands. A row gathered by a rarer term still scores
# on every query term it holds.
GATHER_ROWS = 600


# The terms' analysis: a change here changes what the index holds (``indexing`` re-indexes a
# message whose stored hash was made under another analyser).
ANALYSER = "words+cjk-bigrams/snowball-english"
_stemmers = threading.local()  # a Snowball stemmer keeps its state while it works


@lru_cache(maxsize=65536)
def stem(term: str) -> str:
    """A Latin word's English stem; any other term (digits, CJK) as it is."""
    if not (term.isascii() and term.isalpha()):
        return term
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(term)


def indexed_terms(text: str) -> list[str]:
    """The terms a stored text is indexed under, in order (repeats kept)."""
    return [stem(term) for term in document_terms(text)]


def chunks(text: str) -> list[str]:
    """``text`` in pieces of at most :data:`CHUNK_CHARS` that overlap a little; one piece
    for a short text (an empty text is one empty piece)."""
    if len(text) <= CHUNK_CHARS:
        return [text]
    step = CHUNK_CHARS - CHUNK_OVERLAP
    return [text[i : i + CHUNK_CHARS] for i in range(0, len(text) - CHUNK_OVERLAP, step)]


def _quote(term: str) -> str:
    term = term.encode("utf-8")[:MAX_LEXEME_BYTES].decode("utf-8", "ignore")
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(text: str) -> str:
    """``text``'s terms as a ``tsvector`` literal with their positions."""
    positions: dict[str, list[int]] = defaultdict(list)
    for index, term in enumerate(indexed_terms(text), start=1):
        found = positions[term]
        if len(found) < MAX_POSITIONS:
            found.append(min(index, MAX_POSITION))
    return " ".join(
        f"{_quote(term)}:{','.join(map(str, sorted(set(p))))}" for term, p in positions.items()
    )


def distinct_terms(query: str) -> list[str]:
    """``query``'s terms, each once, at most :data:`MAX_QUERY_TERMS`."""
    return list(dict.fromkeys(stem(term) for term in query_terms(query)))[:MAX_QUERY_TERMS]


def tsquery_literal(query: str | list[str]) -> str:
    """The ``tsquery`` literal matching any of ``query``'s terms (a text, or terms already
    taken from one); empty when it has none."""
    terms = distinct_terms(query) if isinstance(query, str) else query
    return " | ".join(_quote(term) for term in terms)


def idf(rows: int, df: int) -> float:
    """BM25's inverse document frequency of a term in ``df`` of ``rows`` rows (never
    negative)."""
    return math.log(1.0 + (rows - df + 0.5) / (df + 0.5))


def candidate_terms(dfs: dict[str, int], rows: int) -> list[str]:
    """The terms that gather candidate rows: those held by few enough rows, else the
    rarest :data:`CANDIDATE_MIN_TERMS`; terms no row holds are left out."""
    held = sorted((df, term) for term, df in dfs.items() if df > 0)
    limit = max(CANDIDATE_FLOOR, CANDIDATE_SHARE * rows)
    rare = [(df, term) for df, term in held if df <= limit]
    if not rare:
        return [term for _df, term in held[:CANDIDATE_MIN_TERMS]]
    gathered: list[str] = []
    total = 0
    for df, term in rare:
        if gathered and total + df > GATHER_ROWS:
            break
        gathered.append(term)
        total += df
    return gathered


# Sentence models that read English only: their cosines for a query in another script are
# noise (the bundled MiniLM finds next to nothing for a Chinese question), so such a query
# leans on its words, as with the hashing embedder.
ENGLISH_ONLY = frozenset({"all-minilm-l6-v2", "all-minilm-l6-v2-int8"})
_LETTER_RE = re.compile(r"[^\W\d_]")


def mostly_cjk(text: str) -> bool:
    """Whether most of ``text``'s letters are Chinese, Japanese or Korean characters."""
    if text.isascii():
        return False
    return len(CJK_CHAR_RE.findall(text)) * 2 > len(_LETTER_RE.findall(text))


def vector_weight(embedding_version: str, query: str = "") -> float:
    """How much the cosine weighs: a sentence model's (the local one, or any model behind
    an OpenAI-compatible endpoint) more than half, the hashing embedder's a fifth, and an
    English-only model's for a query mostly in CJK script a fifth too."""
    if embedding_version in ENGLISH_ONLY and mostly_cjk(query):
        return VECTOR_WEIGHT
    if embedding_version.startswith("openai:"):
        return VECTOR_WEIGHTS["all-minilm-l6-v2"]
    return VECTOR_WEIGHTS.get(embedding_version, VECTOR_WEIGHT)


def cosine_span(cosines) -> tuple[float, float]:
    """(lowest, spread) of the cosines that exist (None: a candidate without a vector)."""
    found = [c for c in cosines if c is not None]
    if not found:
        return 0.0, 0.0
    return min(found), max(found) - min(found)


def fuse(pairs, weight: float = VECTOR_WEIGHT, span: tuple[float, float] | None = None):
    """The hybrid scores of candidates given as ``(lexical, cosine or None)``: the lexical
    score over the best one, the cosine min-max normalised over ``span`` (by default the
    candidates' own; a sentence model's cosines crowd into a narrow band, which a raw blend
    would all but ignore), the cosine weighing ``weight``."""
    pairs = list(pairs)
    best = max((lexical for lexical, _ in pairs), default=0.0)
    low, spread = span if span is not None else cosine_span(v for _, v in pairs)
    return [
        blend(
            lexical, best, (vector - low) / spread if vector is not None and spread else 0.0, weight
        )  # fmt: skip
        for lexical, vector in pairs
    ]


def blend(
    lexical: float, best_lexical: float, vector: float, weight: float = VECTOR_WEIGHT
) -> float:
    """The hybrid score of a candidate: its lexical score over the best one, and its cosine,
    the cosine weighing ``weight``."""
    normalised = lexical / best_lexical if best_lexical > 0 else 0.0
    return (1.0 - weight) * normalised + weight * max(vector, 0.0)


def vector_literal(values) -> str:
    """A vector as pgvector's text form."""
    return "[" + ",".join(f"{v:.6g}" for v in values) + "]"
