"""Compiled matching: plain, case-sensitive, whole-word (Latin and CJK) and regex keys."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldbook.engine.keys import (
    MAX_REGEX_LENGTH,
    RegexKey,
    RegexKeyError,
    compile_regex_key,
    find_plain,
    is_whole_word,
    parse_regex_key,
)
from worldbook.engine.matcher import _Automaton, clear_cache, compile_book, encode
from worldbook.engine.schema import EntryIn


def _compiled(*entries: dict, content_hash: str = "h"):
    clear_cache()
    return compile_book(
        "b", content_hash, [EntryIn.model_validate({"content": "x", **e}) for e in entries]
    )


def _primary(book, text):
    return {i: sorted(keys) for i, keys in book.scan(text).primary.items()}


@pytest.mark.parametrize(
    ("key", "text", "hit"),
    [
        ("cat", "concatenate", False),
        ("cat", "a cat sat", True),
        ("cat", "cat", True),
        ("cat", "猫cat猫", True),
        ("cat", "cats", False),
        ("cat", "(cat)", True),
        ("cat", "cat_", False),
        ("cat", "2cat", False),
        ("铜钥匙", "我把铜钥匙递给守卫", True),
        ("钥匙", "铜钥匙", True),
        ("コーヒー", "アイスコーヒーを", False),
        ("コーヒー", "熱いコーヒーを飲む", False),
        ("コーヒー", "熱い コーヒー を", True),
        ("서울", "서울에", False),
        ("서울", "서울 시", True),
        ("New York", "in New York.", True),
        ("New York", "New Yorker", False),
        ("#tag", "x#tag y", True),
    ],
)
def test_whole_word(key, text, hit):
    book = _compiled({"keys": [key], "match_whole_words": True})
    assert (0 in book.scan(text).primary) is hit


def test_whole_word_edges_directly():
    assert is_whole_word("a cat", 2, 5)
    assert not is_whole_word("concatenate", 3, 6)
    assert is_whole_word("猫cat猫", 1, 4)
    assert not is_whole_word("", 0, 0)


def test_plain_keys_are_substrings_and_case_insensitive_by_default():
    book = _compiled({"keys": ["cat", "Dog"]})
    assert _primary(book, "CONCATENATE and hotdogs") == {0: [0, 1]}


def test_case_sensitive_entries_use_their_own_automaton():
    book = _compiled({"keys": ["Cat"], "case_sensitive": True}, {"keys": ["Cat"]})
    assert _primary(book, "a cat") == {1: [0]}
    assert _primary(book, "a Cat") == {0: [0], 1: [0]}


def test_overlapping_and_shared_keys_hit_every_entry():
    book = _compiled({"keys": ["key", "铜钥匙"]}, {"keys": ["钥匙", "keyhole"]}, {"keys": ["KEY"]})
    assert _primary(book, "the keyhole 铜钥匙") == {0: [0, 1], 1: [0, 1], 2: [0]}


def test_secondary_keys_are_reported_separately():
    book = _compiled({"keys": ["gate"], "secondary_keys": ["guard", "night"]})
    hits = book.scan("the guard at the gate")
    assert hits.primary == {0: {0}} and hits.secondary == {0: {0}}


@pytest.mark.parametrize(
    ("key", "text", "hit"),
    [
        ("/gu+ard/", "a guuuard", True),
        ("/gu+ard/", "a GUARD", False),
        ("/gu+ard/i", "a GUARD", True),
        ("/^start/m", "line\nstart here", True),
        ("/^start/", "line\nstart here", False),
        ("/a.b/s", "a\nb", True),
        ("/a.b/", "a\nb", False),
        ("/key\\/door/", "key/door", True),
        ("/钥匙|钥/gu", "铜钥匙", True),
    ],
)
def test_regex_keys(key, text, hit):
    book = _compiled({"keys": [key]})
    assert (0 in book.scan(text).primary) is hit


def test_regex_parsing_follows_sillytavern():
    assert parse_regex_key("plain") is None
    assert parse_regex_key("/a/b/") is None  # unescaped slash inside: a plain key
    assert parse_regex_key("/x/z") is None  # unknown flag: a plain key
    parsed = parse_regex_key("/a\\/b/gi")
    assert parsed == RegexKey(raw="/a\\/b/gi", pattern="a/b", flags="gi")
    assert parsed.source == "(?i)a/b"


def test_regex_length_limit():
    with pytest.raises(RegexKeyError):
        compile_regex_key(RegexKey(raw="", pattern="a" * (MAX_REGEX_LENGTH + 1), flags=""))
    compile_regex_key(RegexKey(raw="", pattern="a" * MAX_REGEX_LENGTH, flags=""))


def test_invalid_regex_in_unpublished_book_never_matches():
    book = _compiled({"keys": ["/(?=x/", "plain"]})
    assert book.invalid_regex == [(0, "/(?=x/")]
    assert _primary(book, "x plain") == {0: [1]}


def test_look_around_and_back_reference_keys_match_as_sillytavern_s():
    book = _compiled({"keys": ["/(?<=the )gate(?! house)/i", "/(ab)\\1/"]})
    assert book.invalid_regex == []
    assert _primary(book, "I see THE Gate now") == {0: [0]}
    assert _primary(book, "the gate house") == {}
    assert _primary(book, "abab") == {0: [1]}
    again = pickle.loads(pickle.dumps(book))  # as the shared store keeps it
    assert _primary(again, "the gate.") == {0: [0]}


def test_a_backtracking_key_past_its_budget_does_not_match_and_is_then_skipped():
    from console.backtracking import MAX_TIMEOUTS

    book = _compiled({"keys": ["/(?=(x+x+)+y)x/", "plain"]})
    slow = "x" * 3000 + " plain"
    for _ in range(MAX_TIMEOUTS + 1):
        assert _primary(book, slow) == {0: [1]}  # the plain key still matched
    assert book._backtracking[0].timeouts == MAX_TIMEOUTS


def test_plain_key_that_looks_like_a_path_matches_literally():
    book = _compiled({"keys": ["/a/b/"]})
    assert 0 in book.scan("see /a/b/ here").primary


def test_compiled_books_are_cached_by_content_hash():
    entries = [EntryIn.model_validate({"content": "x", "keys": ["k"]})]
    clear_cache()
    first = compile_book("b", "hash-1", entries)
    assert compile_book("b", "hash-1", entries) is first
    assert compile_book("b", "hash-2", entries) is not first


def test_empty_book_and_empty_text():
    book = _compiled({"keys": []})
    assert book.scan("anything").primary == {}
    assert _compiled({"keys": ["a"]}).scan("").primary == {}


def test_text_with_a_lone_surrogate_still_matches_around_it():
    # The automaton works on UTF-8, which cannot hold a lone surrogate: the scan replaces it
    # one character for one, so whole-word edges stay where they were.
    book = _compiled(
        {"keys": ["cat"], "match_whole_words": True}, {"keys": ["猫"]}, {"keys": ["dog"]}
    )
    assert _primary(book, "a cat\ud800猫 \udfffdog") == {0: [0], 1: [0], 2: [0]}
    assert _primary(book, "scat\ud800") == {}


def test_case_sensitive_and_folded_words_keep_their_own_postings_across_a_reload():
    import pickle

    book = _compiled(
        {"keys": ["Cat", "whale"], "case_sensitive": True},
        {"keys": ["cat", "bird"], "match_whole_words": True},
        {"keys": ["/b.rd/i"]},
    )
    again = pickle.loads(pickle.dumps(book))
    for text in ("Cat bird", "cat birdy", "whale Bird", "CAT"):
        assert _primary(again, text) == _primary(book, text), text
    assert _primary(again, "Cat bird") == {0: [0], 1: [0, 1], 2: [0]}


def test_a_word_with_a_lone_surrogate_does_not_lose_the_words_after_it():
    # The automaton library silently stops at the first word UTF-8 cannot hold. The schema
    # lets no such key into a book; should one reach the automaton, it is held with U+FFFD.
    automaton = _Automaton(0, ["ab", "c\ud800", "bc"])
    assert automaton.find("xab\ud800bc c\ud800") == [(0, 1, 3), (2, 4, 6), (1, 7, 9)]


# Keys built from pieces that stress the compiler's batched paths: the separator joined key
# lists use, empty keys, slashes (maybe regex keys), letters whose lower case depends on
# context or changes length (final sigma, dotted I), and the same words in several entries.
_PIECES = ["a", "B", "ab", "\x1f", "/", "/x/i", "Σ", "ΟΔΟΣ", "İ", "ß", " ", "é", "名前", "k"]
_key = st.lists(st.sampled_from(_PIECES), max_size=3).map("".join)
_entry = st.fixed_dictionaries(
    {
        "keys": st.lists(_key, max_size=4),
        "secondary_keys": st.lists(_key, max_size=3),
        "case_sensitive": st.booleans(),
        "match_whole_words": st.booleans(),
    }
)


def _expected_codes(entries: list[EntryIn], text: str) -> set[int]:
    """Per key, by the reference rule (``find_plain``), the codes ``scan_codes`` reports."""
    codes = set()
    for i, entry in enumerate(entries):
        for secondary, keys in ((False, entry.keys), (True, entry.secondary_keys)):
            for k, key in enumerate(keys):
                if not key or parse_regex_key(key) is not None:
                    continue
                haystack, needle = (
                    (text, key) if entry.case_sensitive else (text.lower(), key.lower())
                )
                if find_plain(haystack, needle, entry.match_whole_words):
                    codes.add(encode(i, k, secondary))
    return codes


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(_entry, max_size=6), text=st.lists(st.sampled_from(_PIECES)).map("".join))
def test_compiled_plain_keys_match_the_reference_rule_key_by_key(entries, text):
    models = [EntryIn.model_validate({"content": "x", **e}) for e in entries]
    clear_cache()
    book = compile_book("b", "h", models)
    regex_codes = set().union(*map(set, book._regex_codes)) if book._regex_codes else set()
    assert book.scan_codes(text) - regex_codes == _expected_codes(models, text)
