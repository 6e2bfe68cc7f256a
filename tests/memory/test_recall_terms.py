"""Recall's pure parts: chunks, the literal tsvector and tsquery, the blend."""

from __future__ import annotations

import pytest

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


def test_words_meet_their_english_stems_and_other_terms_stay():
    assert recall.stem("volunteering") == recall.stem("volunteer")
    assert recall.stem("proposal") == recall.stem("propose")
    assert recall.stem("2024") == "2024" and recall.stem("钥匙") == "钥匙"
    assert recall.distinct_terms("Volunteering volunteers") == [recall.stem("volunteer")]
    assert recall.stem("volunteer") in recall.tsvector_literal("I volunteered there")


def test_idf_falls_as_a_term_spreads_and_never_goes_negative():
    assert recall.idf(1000, 1) > recall.idf(1000, 100) > recall.idf(1000, 1000) >= 0.0


def test_candidates_are_gathered_by_the_rarer_terms():
    rows = 10_000
    dfs = {"the": 9_000, "cello": 12, "learn": 400, "absent": 0}
    assert recall.candidate_terms(dfs, rows) == ["cello", "learn"]
    # every term common: the rarest two still gather
    common = {"the": 9_000, "and": 8_000, "you": 7_000}
    assert recall.candidate_terms(common, rows) == ["you", "and"]
    assert recall.candidate_terms({"absent": 0}, rows) == []


def test_the_rarer_terms_gather_no_more_rows_than_the_budget():
    rows = 10_000  # every term below is under the share (500 rows)
    dfs = {"cello": 12, "kenji": 450, "when": 300, "place": 200, "into": 480}
    assert sum(dfs.values()) > recall.GATHER_ROWS
    gathered = recall.candidate_terms(dfs, rows)
    assert gathered == ["cello", "place", "when"]  # rarest first: 512 rows, "kenji" too many
    assert sum(dfs[t] for t in gathered) <= recall.GATHER_ROWS
    # the rarest term gathers however many rows it holds
    assert recall.candidate_terms({"kenji": 900, "into": 950}, 20_000) == ["kenji"]


def test_the_fusion_spreads_the_cosines_over_the_candidates():
    scores = recall.fuse([(4.0, 0.30), (0.0, 0.40), (2.0, None)], weight=0.5)
    assert scores == pytest.approx([0.5, 0.5, 0.25])
    assert recall.fuse([(1.0, 0.3)], weight=0.7) == pytest.approx([0.3])  # one: no spread
    assert recall.fuse([(1.0, 0.3)], 0.7, span=(0.1, 0.4)) == pytest.approx([0.3 + 0.35])
    assert recall.cosine_span([None, 0.2, 0.6]) == (0.2, 0.6 - 0.2)
    assert recall.cosine_span([None]) == (0.0, 0.0)
    assert recall.fuse([]) == []


@pytest.mark.parametrize(
    ("query", "cjk"),
    [
        ("where is the copper key", False),
        ("铜钥匙在哪里", True),
        ("Mira的铜钥匙在哪里？", True),  # a Latin name inside a Chinese question
        ("Where did Mira put 钥匙", False),
        ("鍵はどこ？", True),
        ("", False),
        ("1234 ?!", False),
    ],
)
def test_a_query_is_mostly_cjk_when_most_of_its_letters_are(query, cjk):
    assert recall.mostly_cjk(query) is cjk


def test_an_english_only_model_weighs_little_for_a_chinese_question():
    model = "all-minilm-l6-v2"
    english, chinese = (
        recall.vector_weight(model, "where is the key"),
        recall.vector_weight(model, "钥匙在哪里"),
    )
    assert english == recall.VECTOR_WEIGHTS[model] and chinese == recall.VECTOR_WEIGHT
    # a model behind an endpoint may read Chinese: its weight does not change
    assert recall.vector_weight("openai:bge-m3", "钥匙在哪里") == recall.VECTOR_WEIGHTS[model]
