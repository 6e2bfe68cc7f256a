"""Preparing a revision fast must not change what it prepares: each speed-up of the
preparation equals the plain rule it replaced, kept here as the reference.

- ``lexical.document_terms`` (a byte translation for ASCII text, CJK runs cut into unigrams
  and bigrams) equals the three regex scans;
- ``LexicalIndex.build`` (every weight in whole-array steps) equals the BM25 formula applied
  posting by posting, float for float, term numbers and posting order included;
- records made from stored content (``entry.compact_stored``) equal records of the
  validated model;
- a revision prepared without counting its blocks' tokens selects exactly as one prepared
  with them.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.embedding.words import CJK_CLASS, fold
from console.search.lexical import (
    BM25_B,
    BM25_K1,
    TITLE_WEIGHT,
    Doc,
    LexicalIndex,
    document_terms,
)
from worldbook.engine.entry import MODEL_FIELDS, compact, compact_stored
from worldbook.engine.schema import BookIn

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_WORD_RE = re.compile(rf"[^\W_{CJK_CLASS}]+")
_CJK_CHAR_RE = re.compile(rf"[{CJK_CLASS}]")
_CJK_BIGRAM_RE = re.compile(rf"(?=([{CJK_CLASS}]{{2}}))")


def reference_terms(text: str) -> list[str]:
    """Words, then CJK unigrams, then CJK bigrams: three regex scans of the folded text."""
    folded = fold(text)
    terms = _WORD_RE.findall(folded)
    terms.extend("u:" + char for char in _CJK_CHAR_RE.findall(folded))
    terms.extend(_CJK_BIGRAM_RE.findall(folded))
    return terms


def reference_index(docs: list[Doc]):
    """(term numbers, offsets, positions, weights): BM25 posting by posting."""
    counts = []
    for doc in docs:
        counter = Counter(reference_terms(doc.text))
        for term in reference_terms(doc.title):
            counter[term] += TITLE_WEIGHT
        counts.append(counter)
    total = len(counts)
    lengths = [sum(counter.values()) for counter in counts]
    average = (sum(lengths) / total) if total else 0.0
    frequency: Counter[str] = Counter()
    for counter in counts:
        frequency.update(counter.keys())
    postings: dict[str, tuple[list[int], list[float]]] = {}
    for position, counter in enumerate(counts):
        norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[position] / average) if average else 0
        for term, tf in counter.items():
            df = frequency[term]
            idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
            weight = idf * tf * (BM25_K1 + 1) / (tf + norm)
            postings.setdefault(term, ([], []))
            postings[term][0].append(position)
            postings[term][1].append(weight)
    offsets = np.cumsum([0] + [len(p[0]) for p in postings.values()])
    positions = [p for ps, _ in postings.values() for p in ps]
    weights = [w for _, ws in postings.values() for w in ws]
    return {t: k for k, t in enumerate(postings)}, offsets, positions, weights


# Latin (cased, accented, digits, underscores, punctuation), CJK, kana, Hangul, the dotted
# capital I and final sigma (whose lower case differs), emoji, and anything at all.
PIECES = st.sampled_from(
    ["the", "Key", "KEYS", "copper_key", "42", "x2y", " ", "\n", "-", "'s", ".", "é", "Ünï",
     "İ", "ΣΑΣ", "铜钥匙", "灰港", "港", "ミカ", "한국", "😀", "\x1f", "\t", "_"]
)  # fmt: skip
TEXT = st.lists(PIECES, max_size=30).map("".join) | st.text(max_size=60)
ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=80)


@SETTINGS
@given(TEXT | ASCII)
def test_document_terms_equal_the_three_scans(text):
    assert document_terms(text) == reference_terms(text)


DOCS = st.lists(st.builds(Doc, st.uuids().map(str), TEXT | ASCII, TEXT | ASCII), max_size=12)


@SETTINGS
@given(DOCS)
def test_the_index_equals_bm25_posting_by_posting(docs):
    index = LexicalIndex.build(docs)
    terms, offsets, positions, weights = reference_index(docs)
    assert index._terms == terms
    assert index._offsets.tolist() == offsets.tolist()
    assert index._positions.tolist() == positions
    assert index._weights.tolist() == weights  # the same floats, not close ones
    assert index._positions.dtype == np.int32 and index._weights.dtype == np.float64


# Entry fields drawn from what books hold: shared settings (so traits are shared), the rare
# ones (conditions, groups, timed effects, delay_until_recursion as true or a round), key
# lists (one with the separator inside a key), metadata and source.
ENTRY = st.fixed_dictionaries(
    {"content": st.sampled_from(["c", "", "{{char}} waits."])},
    optional={
        "title": st.sampled_from(["", "Gate", "铜钥匙"]),
        "keys": st.lists(st.sampled_from(["gate", "Key", "a\x1fb", "/ga+te/i", "港"]), max_size=3),
        "secondary_keys": st.lists(st.sampled_from(["night", "dawn"]), max_size=2),
        "selective": st.booleans(),
        "logic": st.sampled_from(["and_any", "not_all"]),
        "constant": st.booleans(),
        "enabled": st.booleans(),
        "case_sensitive": st.booleans(),
        "probability": st.sampled_from([100, 50]),
        "scan_depth": st.sampled_from([None, 0, 3]),
        "conditions": st.lists(
            st.sampled_from(
                [
                    {"path": "quest.stage", "op": "in", "value": [1, 2]},
                    {"path": "flag", "op": "exists"},
                    {"path": "a.b", "op": "eq", "value": {"x": [1, "y"]}},
                ]
            ),
            max_size=2,
        ),  # fmt: skip
        "requires": st.lists(st.sampled_from(["e0", "e1"]), max_size=1, unique=True),
        "priority": st.integers(-3, 3),
        "order": st.integers(-3, 3),
        "audience": st.sampled_from([["actor"], ["narrator", "actor"]]),
        "position": st.sampled_from(["before_character", "at_depth", "outlet"]),
        "outlet_name": st.sampled_from([None, "scene"]),
        "sticky": st.sampled_from([None, 2]),
        "delay_until_recursion": st.sampled_from([False, True, 1, 3]),
        "group": st.sampled_from(["", "b, a", " g1 ,g1"]),
        "use_group_scoring": st.sampled_from([None, True]),
        "metadata": st.sampled_from([{}, {"x": 1}]),
        "source": st.sampled_from([None, {"st": {"uid": 3}}]),
    },
)


@SETTINGS
@given(st.lists(ENTRY, max_size=8))
def test_records_of_stored_content_equal_records_of_the_validated_model(entries):
    model = BookIn.model_validate({"name": "B", "entries": entries})
    stored = json.loads(json.dumps(model.model_dump(mode="json")))  # as the database returns it
    fast = compact_stored(stored["entries"])
    slow = compact(model.entries)
    assert fast is not None and len(fast) == len(slow)
    for a, b in zip(fast, slow, strict=True):
        for name in MODEL_FIELDS:
            assert getattr(a, name) == getattr(b, name), name
            assert type(getattr(a, name)) is type(getattr(b, name)), name
        assert a.key_lists() == b.key_lists()
    # Equal settings share one traits tuple, as they do in records of the model.
    assert [[x._traits is y._traits for y in fast] for x in fast] == [
        [x._traits is y._traits for y in slow] for x in slow
    ]


def test_content_stored_by_another_version_is_validated_instead():
    stored = BookIn.model_validate({"name": "B", "entries": [{"content": "c"}]}).model_dump(
        mode="json"
    )["entries"]
    assert compact_stored(stored) is not None
    assert compact_stored([{k: v for k, v in stored[0].items() if k != "vectorized"}]) is None
    assert compact_stored([{**stored[0], "surprise": 1}]) is None
    assert compact_stored([{**stored[0], "id": None}]) is None
