"""A reasoning model's scratchpad before its answer, taken off a complete (non-streamed)
answer. Pure.

Servers that parse reasoning hand it over apart (``reasoning_content``, which we do not
read); others leave it in the content: ``<think>…</think>`` first, then the answer, or
only the closing tag when the chat template opened the block in the prompt. Every caller of
a complete answer (the background's roles, suggestions, summaries, extraction) wants the
answer, so the scratchpad is dropped here. A block that never closes (the answer was cut
short) is left alone: the caller's own checks refuse it.
"""

from __future__ import annotations

import re

_TAGS = "think|thinking|thought|reasoning"
_LEADING = re.compile(rf"^\s*<({_TAGS})>.*?</\1\s*>\s*", re.IGNORECASE | re.DOTALL)
_CLOSE_ONLY = re.compile(rf"^(?:(?!<(?:{_TAGS})>).)*?</({_TAGS})\s*>\s*", re.I | re.DOTALL)


def strip_reasoning(content: str) -> str:
    """``content`` without a leading reasoning block (or the text before a lone closing
    tag); unchanged when it has neither."""
    stripped = _LEADING.sub("", content, count=1)
    if stripped != content:
        return stripped
    return _CLOSE_ONLY.sub("", content, count=1)
