"""LexicalIndex: BM25 over words and CJK bigrams, excerpts, and the content-hash cache."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from console.search.lexical import (
    Doc,
    IndexCache,
    LexicalIndex,
    docs_content_hash,
    document_terms,
    excerpt,
    index_for,
    query_terms,
)

DOCS = [
    Doc("greyport", "灰港基本设定", "灰港是一座蒸汽城市，城内没有电力，夜晚依靠煤气灯照明。"),
    Doc(
        "copper-key", "铜钥匙与城门守卫", "铜钥匙只能开启灰港城门的侧门。守卫在放行前必须核对手令。"
    ),
    Doc("warrant", "Warrants", "Guards check every visitor's warrant before the gate opens."),
]


def test_chinese_query_finds_the_copper_key_entry_first():
    hits = LexicalIndex.build(DOCS).search("铜钥匙", limit=5)
    assert hits[0].key == "copper-key"
    assert "铜钥匙只能开启灰港城门的侧门" in hits[0].excerpt
    assert all(hit.key != "warrant" for hit in hits)


def test_sentence_query_ranks_by_overlap():
    hits = LexicalIndex.build(DOCS).search("我把铜钥匙递给守卫。")
    assert [hit.key for hit in hits][:1] == ["copper-key"]


def test_english_query_is_case_insensitive():
    hits = LexicalIndex.build(DOCS).search("WARRANT gate")
    assert hits[0].key == "warrant"
    assert hits[0].score > 0


def test_single_cjk_character_query_uses_unigrams():
    hits = LexicalIndex.build(DOCS).search("电")
    assert [hit.key for hit in hits] == ["greyport"]


def test_no_match_and_empty_query():
    index = LexicalIndex.build(DOCS)
    assert index.search("dragon") == []
    assert index.search("   !!") == []
    assert index.search("铜钥匙", limit=0) == []
    assert LexicalIndex.build([]).search("x") == []


def test_title_matches_count():
    docs = [Doc("a", "Lighthouse", "A tall tower."), Doc("b", "Tower", "The lighthouse keeper.")]
    assert LexicalIndex.build(docs).search("lighthouse")[0].key == "a"


def test_ties_keep_document_order_and_limit_applies():
    docs = [Doc(str(i), "", "same words here") for i in range(5)]
    hits = LexicalIndex.build(docs).search("words", limit=3)
    assert [hit.key for hit in hits] == ["0", "1", "2"]


def test_tokenizer():
    assert query_terms("Copper KEY 铜钥匙") == ["copper", "key", "铜钥", "钥匙"]
    assert query_terms("门") == ["u:门"]
    assert "u:铜" in document_terms("铜钥匙")
    assert query_terms("snake_case") == ["snake", "case"]


def test_excerpt_is_centred_on_the_match_and_bounded():
    text = "平静的海面。" * 200 + "铜钥匙只能开启灰港城门的侧门。" + "远处的灯塔。" * 200
    hits = LexicalIndex.build([Doc("k", "", text)]).search("铜钥匙 侧门")
    assert len(hits[0].excerpt) == 600
    assert "铜钥匙只能开启灰港城门的侧门" in hits[0].excerpt
    middle = hits[0].excerpt.index("铜钥匙")
    assert 200 < middle < 400


def test_excerpt_prefers_the_densest_region():
    text = "gate " + "filler " * 200 + "copper key gate warrant " + "filler " * 200
    snippet = excerpt(text, {"copper", "key", "gate", "warrant"})
    assert "copper key gate warrant" in snippet


def test_excerpt_falls_back_to_title_for_empty_text():
    hits = LexicalIndex.build([Doc("t", "铜钥匙", "")]).search("铜钥匙")
    assert hits[0].excerpt == "铜钥匙"


@given(st.text(max_size=2000), st.text(max_size=20))
def test_excerpt_never_exceeds_600_chars(text, query):
    snippet = excerpt(text, set(query_terms(query)))
    assert len(snippet) <= 600
    assert snippet in text


def test_dotted_i_does_not_shift_offsets():
    text = "İ" * 700 + " copper key " + "x" * 700
    assert "copper key" in excerpt(text, {"copper", "key"})


def test_cache_reuses_indexes_by_content_hash():
    cache = IndexCache(maxsize=2)
    first = index_for(DOCS, cache=cache)
    assert index_for(list(DOCS), cache=cache) is first
    other = [Doc("x", "", "other")]
    index_for(other, cache=cache)
    index_for([Doc("y", "", "third")], cache=cache)
    assert docs_content_hash(DOCS) not in cache  # least recently used was evicted
    assert docs_content_hash(other) in cache
    assert index_for(DOCS, content_hash="rev-1", cache=cache) is not first


def test_content_hash_frames_fields():
    assert docs_content_hash([Doc("a", "bc", "")]) != docs_content_hash([Doc("ab", "c", "")])


def test_five_thousand_entries_build_and_search():
    docs = [
        Doc(f"e{i}", f"条目{i}", f"第{i}号条目：灰港的第{i % 97}条街道上有一家商店 shop{i % 13}。")
        for i in range(5000)
    ]
    docs.append(Doc("target", "铜钥匙", "铜钥匙只能开启灰港城门的侧门。"))
    index = LexicalIndex.build(docs)
    assert len(index) == 5001
    assert index.search("铜钥匙", limit=3)[0].key == "target"
    assert len(index.search("shop7", limit=10)) == 10
