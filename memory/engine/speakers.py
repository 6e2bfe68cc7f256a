"""The names of the talk's own two sides, taken out of a question before it is searched (pure).

Everything a player's recall searches was said by the player or to them, by the characters
they talk with, so the speakers' own names tell no turn from another; yet they are said in
every greeting ("Hey Maya! How have you been?"), and a question about a speaker names them
("Where has Maya travelled lately?"). Left in, the name pulls the greetings up: a sentence
model weighs a name heavily (its cosine puts "Hey Maya!" next to any question about Maya),
and the lexical side finds it in every short hello. So the question is searched without
them (:func:`without`): "Where has travelled lately?" is what was asked.

- A Latin-script name is removed as a whole word, as it is written (a player called Rose
  who asks about "the rose bushes" keeps her roses); a possessive ("Maya's
  brother") becomes "their", so what follows still reads as someone's (``engine.entities``
  finds people by relation after a possessive);
  a name of several words is removed whole, and each of its capitalised words of at least
  :data:`MIN_PART` letters alone ("Maya" of "Maya Chen"), except the question words and
  the like that a name may hold ("The Doctor").
- A name in CJK script is removed wherever it stands (CJK has no spaces between words).
- A question that would be left with no content word is kept as it was: it asked about
  the name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory.engine.decompose import STOP_WORDS, content_words

MIN_PART = 3
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def forms(names: Iterable[str]) -> list[str]:
    """The forms to remove, longest first (a full name before its parts)."""
    found: set[str] = set()
    for name in names:
        name = " ".join(name.split())
        if not name:
            continue
        found.add(name)
        if _CJK.search(name):
            continue
        for part in name.split(" "):
            part = part.strip(".,'\"()")
            if len(part) >= MIN_PART and part[:1].isupper() and part.casefold() not in STOP_WORDS:
                found.add(part)
    return sorted(found, key=lambda form: (-len(form), form))


def pattern(names: Iterable[str]) -> re.Pattern | None:
    """One pattern matching every form of ``names``, or None when there is none."""
    alternatives = []
    for form in forms(names):
        if _CJK.search(form):
            alternatives.append(re.escape(form))
        else:
            alternatives.append(
                rf"(?<!\w){re.escape(form)}(?P<s{len(alternatives)}>['\u2019]s)?(?!\w)"
            )
    return re.compile("|".join(alternatives)) if alternatives else None


def _replace(match: re.Match) -> str:
    return " their " if any(match.groupdict().values()) else " "


def without(question: str, names: Iterable[str]) -> str:
    """``question`` without the speakers' ``names`` (its spaces tidied), or ``question``
    itself when no content word would be left of it."""
    found = pattern(names)
    if found is None:
        return question
    stripped = " ".join(found.sub(_replace, question).split())
    return stripped if content_words(stripped) else question
