"""Recall's pure parts: chunks, the literal tsvector and tsquery, the blend."""

from __future__ import annotations

from memory.engine import recall


def test_a_query_matches_any_of_its_terms():
    assert recall.tsquery_literal("Where is the key?") == "'where' | 'is' | 'the' | 'key'"
    assert recall.tsquery_literal("key, key!") == "'key'"
    assert recall.tsquery_literal("   ") == ""


def test_cjk_queries_keep_their_bigrams():
    assert recall.tsquery_literal("铜钥匙") == "'铜钥' | '钥匙'"


def test_quotes_and_backslashes_are_escaped():
    assert recall._quote("a'b\\c") == "'a''b\\\\c'"


def test_positions_are_kept_per_term():
    assert recall.tsvector_literal("key key door") == "'key':1,2 'door':3"


def test_long_texts_are_chunked_with_overlap():
    text = "x" * (recall.CHUNK_CHARS * 2)
    pieces = recall.chunks(text)
    assert len(pieces) >= 2 and all(len(p) <= recall.CHUNK_CHARS for p in pieces)
    assert recall.chunks("short") == ["short"]


def test_the_blend_normalises_the_lexical_side():
    assert recall.blend(2.0, 4.0, 0.5) == 0.5 * 0.5 + 0.5 * 0.5
    assert recall.blend(1.0, 0.0, -0.2) == 0.0
