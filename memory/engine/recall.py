"""Recall's pure parts: chunking a message, the lexical forms PostgreSQL ranks, and blending.

- A message longer than :data:`CHUNK_CHARS` is indexed as overlapping chunks; a hit on any
  chunk is a hit on its message.
- The lexical side uses the worldbook engine's terms (words, CJK bigrams and unigrams), so
  Chinese and Japanese text is searchable without a dictionary. PostgreSQL stores them as a
  ``tsvector`` written literally (no parser of its own in between, so a CJK bigram stays a
  bigram) with each term's positions, and ranks with ``ts_rank_cd``; the query is the
  ``tsquery`` OR of the query's terms.
- The hybrid score blends the lexical rank (normalised by the best of the candidates) with
  the vector similarity, as the worldbook's hybrid search does.
"""

from __future__ import annotations

from collections import defaultdict

from worldbook.engine.lexical import document_terms, query_terms

CHUNK_CHARS, CHUNK_OVERLAP = 1200, 150
MAX_POSITION = 16383  # PostgreSQL's largest tsvector position
MAX_POSITIONS = 256  # and how many it keeps per lexeme
MAX_LEXEME_BYTES = 2046
MAX_QUERY_TERMS = 64
LEXICAL_WEIGHT, VECTOR_WEIGHT = 0.5, 0.5


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
    for index, term in enumerate(document_terms(text), start=1):
        found = positions[term]
        if len(found) < MAX_POSITIONS:
            found.append(min(index, MAX_POSITION))
    return " ".join(
        f"{_quote(term)}:{','.join(map(str, sorted(set(p))))}" for term, p in positions.items()
    )


def tsquery_literal(query: str) -> str:
    """The ``tsquery`` literal matching any of ``query``'s terms; empty when it has none."""
    terms = list(dict.fromkeys(query_terms(query)))[:MAX_QUERY_TERMS]
    return " | ".join(_quote(term) for term in terms)


def blend(lexical: float, best_lexical: float, vector: float) -> float:
    """The hybrid score of a candidate: its lexical rank over the best one, and its cosine."""
    normalised = lexical / best_lexical if best_lexical > 0 else 0.0
    return LEXICAL_WEIGHT * normalised + VECTOR_WEIGHT * max(vector, 0.0)


def vector_literal(values) -> str:
    """A vector as pgvector's text form."""
    return "[" + ",".join(f"{v:.6g}" for v in values) + "]"
