"""Where words begin and end, for everything that ranks text by its words: the hashing
embedder hashes their n-grams (``console.embedding.hashing``), the worldbook's BM25 index and
memory's recall index their terms (``console.search.lexical``).

Latin and digit runs are words; Chinese, Japanese and Korean runs (written without spaces)
are kept whole for the caller to cut into characters and bigrams. :func:`fold` lower-cases
without moving offsets, so an excerpt found in folded text is the same span of the original.
"""

from __future__ import annotations

import re

# Scripts written without spaces between words: Han (with extensions and compatibility
# ideographs), kana, Hangul syllables, CJK punctuation excluded.
CJK_CLASS = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\U00020000-\U0002ffff"
)
CJK_CHAR_RE = re.compile(rf"[{CJK_CLASS}]")  # one CJK character
TOKEN_RE = re.compile(rf"(?P<cjk>[{CJK_CLASS}]+)|(?P<word>[^\W_{CJK_CLASS}]+)")


def fold(text: str) -> str:
    """Lowercase ``text`` character by character so that offsets stay aligned.

    ``str.lower`` can lengthen a string ("İ" becomes two code points), which would shift every
    excerpt offset after it; such characters are left as they are.
    """
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
