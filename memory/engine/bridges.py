"""The names a question's first hits bring in, to ask for in a second hop (pure).

Real questions chain facts said in different sessions: "Where is her old roommate moving
for work?" is answered by "My old roommate Aiko got a job with Northwind Freight" and by
"Northwind Freight is sending its new people to its Edinburgh office", which shares no
word with the question. The first hit names what links the two ("Northwind Freight"), so
recall asks for those names too (``search``), and keeps the best turn each finds that the
first hits do not hold already.

:func:`names` reads proper names in the first hits' texts: a run of capitalised words (one
or more, "&" allowed inside), not the first word of a sentence unless the run is longer,
and none of the words a sentence may start with or that name a day or month. A name the
question already says, or a speaker's (``exclude``), brings nothing new.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory.engine.decompose import STOP_WORDS
from memory.engine.entities import NOT_NAMES
from memory.engine.timerange import MONTHS

MAX_NAMES = 2
_RUN = re.compile(r"(?<![\w'])([A-Z][a-z]+(?:\s+(?:&\s+)?[A-Z][a-z]+)*)(?![\w'])")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"\n]\s*|\b(?:user|assistant):\s*)$")
DAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday today tomorrow".split())


def _plain(word: str) -> bool:
    folded = word.casefold()
    return word in NOT_NAMES or folded in STOP_WORDS or folded in MONTHS or folded in DAYS


def names(texts: Iterable[str], exclude: Iterable[str] = (), limit: int = MAX_NAMES) -> list[str]:
    """Up to ``limit`` proper names of ``texts``, in order, each once, none of
    ``exclude`` (nor any name one of its words makes)."""
    excluded = {word.casefold() for text in exclude for word in re.findall(r"\w+", text)}
    found: list[str] = []
    for text in texts:
        for match in _RUN.finditer(text):
            words = match.group(1).split()
            if _SENTENCE_START.search(text[: match.start()]):
                words = words[1:] if len(words) == 1 or _plain(words[0]) else words
            words = [w for w in words if w != "&"]
            while words and _plain(words[0]):
                words = words[1:]
            if not words or any(w.casefold() in excluded for w in words):
                continue
            name = " ".join(words)
            if name not in found:
                found.append(name)
            if len(found) == limit:
                return found
    return found
