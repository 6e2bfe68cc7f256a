"""A question that asks about two or more things, split into one sub-query per thing (pure).

"What did Mel do the week before her pottery class and after the camping trip?" needs the
turns about the class, about the trip, and what came between: turns that share half of the
question's words each, which the whole question ranks below a turn that happens to share a
few words with both halves. Recall therefore ranks each part on its own too, and merges the
lists (``engine.fusion.merge``).

The rules, by words only (no model call):

- the question is cut at conjunctions and connectives of time and comparison ("and",
  "both", "as well as", "before", "after", "while", "than", "or", a comma or semicolon,
  and their Chinese forms);
- a part keeps its content words (:data:`STOP_WORDS` left out);
- parts made of names only ("Caroline and Melanie both like …") take the other parts'
  words that are not names, and replace them: each person is asked what the question asks;
- a part of fewer than :data:`MIN_PART_WORDS` content words ("… and where did he get
  it?") says too little to be asked alone: it is joined to the part before (or after);
  a name alone is kept, for the rule below;
- fewer than two parts: no sub-queries (the question is asked whole only).
"""

from __future__ import annotations

import re

MAX_PARTS = 3
MIN_PART_WORDS = 2
SEPARATORS = re.compile(
    r"\s*(?:[,;]|\b(?:and|both|as well as|before|after|while|than|or|then|versus|vs)\b"
    r"|以及|还有|之前|之后|以前|以后|并且|或者|和|跟|与|，|；)\s*",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
STOP_WORDS = frozenset(
    """
    a an the this that these those there here what which who whom whose when where why how
    do does did done doing is are was were be been being am have has had having will would
    shall should can could may might must i me my mine we us our ours you your yours he him
    his she her hers it its they them their theirs to of in on at for from by with about
    into over under as if so not no yes any some all each every also just ever much many
    more most other others own same such only very too kind sort time ago s t
    get got give gave given make made take took go went say said called thing things way
    """.split()
)


def content_words(text: str) -> list[str]:
    """``text``'s words that carry content (not :data:`STOP_WORDS`), in order; a CJK run
    counts as one word."""
    return [w for w in _WORD.findall(text) if w.casefold() not in STOP_WORDS]


def _size(words: list[str]) -> int:
    """How many words ``words`` says: a CJK run (unsplit) of three characters or more is
    a phrase, counted as two."""
    return sum(2 if _CJK.match(word) and len(word) >= 3 else 1 for word in words)


def _is_name(word: str) -> bool:
    return word[:1].isupper() and not _CJK.match(word)


def sub_queries(question: str) -> list[str]:
    """The question's parts as sub-queries (each its content words joined by spaces), at
    most :data:`MAX_PARTS`; empty when the question is about one thing."""
    parts: list[list[str]] = []
    short: list[str] = []  # words of a short part, waiting for a part to join
    for segment in SEPARATORS.split(question):
        words = content_words(segment)
        if not words:
            continue
        if _size(words) < MIN_PART_WORDS and not all(map(_is_name, words)):
            if parts and not all(map(_is_name, parts[-1])):
                parts[-1].extend(words)
            else:
                short.extend(words)
            continue
        parts.append([*short, *words] if not all(map(_is_name, words)) else words)
        short = [] if not all(map(_is_name, words)) else short
    if short and parts:
        parts[-1].extend(short)
    if len(parts) < 2:
        return []
    named = [part for part in parts if all(map(_is_name, part))]
    if named and len(named) < len(parts):
        # "Caroline and Melanie both like …": the names, each with the rest's words.
        rest = [w for part in parts if part not in named for w in part if not _is_name(w)]
        parts = [[*part, *rest] for part in named]
    out: list[str] = []
    for part in parts:
        text = " ".join(dict.fromkeys(part))
        if text and text not in out:
            out.append(text)
    return out[:MAX_PARTS] if len(out) >= 2 else []
