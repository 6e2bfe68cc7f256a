"""The harder synthetic set's building blocks and its one rule about words (pure).

A :class:`Story` is something a person tells over one or more turns (its :class:`Part`\\ s,
each said in another session for a multi-hop story), with the questions a reader would ask
about it and *distractors*: turns that use the question's words about something else. A
question is asked in one of two forms:

- ``asked``: as people ask, sharing a word or two with what was said or with the turn that
  led to it (the cue: "How did the interview go?" before "They offered me the post!");
- ``paraphrased``: in other words entirely. Such a question shares no content word with
  any part of its story as said (:func:`shared_content`: words are compared by the same
  English stem as recall's lexical side; CJK text by its character bigrams; stop words,
  question words and the speakers' names do not count). The generator checks the rule on
  the filled text and asks the ``asked`` form when a filled value breaks it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from console.search.lexical import query_terms
from memory.engine.recall import stem


@dataclass(frozen=True)
class Part:
    said: tuple[str, ...]  # phrasings of the turn, by the story's owner
    cue: tuple[str, ...] = ()  # what the other person says just before (may be none)


@dataclass(frozen=True)
class Story:
    key: str
    category: str
    parts: tuple[Part, ...]
    asked: tuple[str, ...]
    paraphrased: tuple[str, ...]
    answer: str
    distractors: tuple[str, ...] = ()
    # "when": the first part says when with {when}, relative to its session's date;
    # "before": the parts are said in consecutive sessions and the question dates one by
    # the other ("the week before the trip").
    time: str = ""


_LATIN = re.compile(r"[a-z0-9]+")


def content_words(text: str, stopwords: frozenset[str], names: frozenset[str] = frozenset()):
    """The content terms of ``text``: English stems of its words that are neither stop
    words nor names, and its CJK bigrams that are no stop word and hold no stop character
    nor a character of a name."""
    folded = text.casefold()
    found: set[str] = set()
    for word in _LATIN.findall(folded):
        if word not in stopwords and word not in names and len(word) > 1:
            found.add(stem(word))
    for term in query_terms(folded):
        if term.isascii() or term in stopwords or _named(term, names):
            continue
        if not stopwords.intersection(term):  # a bigram with a particle ("的狗") is no word
            found.add(term)
    return found


def _named(term: str, names: frozenset[str]) -> bool:
    return any(set(term) & set(name) for name in names if not name.isascii())


def shared_content(
    question: str, said: list[str], stopwords: frozenset[str], names: frozenset[str]
) -> set[str]:
    """The content terms ``question`` shares with any of the ``said`` texts."""
    asked = content_words(question, stopwords, names)
    return {term for text in said for term in content_words(text, stopwords, names) & asked}
