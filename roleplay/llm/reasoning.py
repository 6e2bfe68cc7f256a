"""A reasoning model's scratchpad before its answer, kept out of the answer. Pure.

Servers that parse reasoning hand it over apart (``reasoning_content``, which we do not
read); others leave it in the content, ``<think>…</think>`` first and then the answer. No
caller wants the scratchpad: a player does not read it, a reply that carried it would feed
it back into every later prompt, and the background's roles parse the answer.

- A complete answer (:func:`strip_reasoning`) loses a leading block, or the text before a
  lone closing tag when the chat template opened the block in the prompt.
- A streamed answer (:class:`StreamFilter`) holds back what could still open a block, drops
  a block that opened first, and passes everything else through untouched. It cannot know
  a lone closing tag is coming, so that case streams as it came.

A block that never closes (the answer was cut short) is given back as it came: nothing is
lost, and the caller's own checks see it.
"""

from __future__ import annotations

import re

_TAGS = ("think", "thinking", "thought", "reasoning")
_NAMES = "|".join(_TAGS)
_LEADING = re.compile(rf"^\s*<({_NAMES})>.*?</\1\s*>\s*", re.IGNORECASE | re.DOTALL)
_CLOSE_ONLY = re.compile(rf"^(?:(?!<(?:{_NAMES})>).)*?</({_NAMES})\s*>\s*", re.I | re.DOTALL)
_OPEN = re.compile(rf"<({_NAMES})>", re.IGNORECASE)
_OPENINGS = tuple(f"<{tag}>" for tag in _TAGS)


def strip_reasoning(content: str) -> str:
    """``content`` without a leading reasoning block (or the text before a lone closing
    tag); unchanged when it has neither."""
    stripped = _LEADING.sub("", content, count=1)
    if stripped != content:
        return stripped
    return _CLOSE_ONLY.sub("", content, count=1)


class StreamFilter:
    """Feed each streamed piece to :meth:`feed` and send what it returns; at the end send
    :meth:`finish`'s. Once :attr:`passing`, every piece comes back as it went in."""

    def __init__(self) -> None:
        self.passing = False
        self.held = ""  # what came so far and is not decided (or the open block)
        self.closing = ""  # the open block's closing tag, lower case
        self.after = False  # the block closed: the answer's leading blank is dropped

    def feed(self, text: str) -> str:
        if self.passing:
            return text
        if self.after:
            text = text.lstrip()
            self.passing = bool(text)
            return text
        self.held += text
        if self.closing:
            return self._inside()
        start = self.held.lstrip()
        opened = _OPEN.match(start)
        if opened:
            self.closing = f"</{opened.group(1).lower()}>"
            return self._inside()
        lowered = start.lower()
        if not start or any(opening.startswith(lowered) for opening in _OPENINGS):
            return ""  # blank, or what may still become an opening tag: wait
        return self._pass()

    def finish(self) -> str:
        """What is still held back: nothing after a closed block, else the held text."""
        return "" if self.passing or self.after else self._pass()

    def _inside(self) -> str:
        end = self.held.lower().find(self.closing)
        if end < 0:
            return ""
        rest = self.held[end + len(self.closing) :]
        self.held, self.closing, self.after = "", "", True
        return self.feed(rest)

    def _pass(self) -> str:
        held, self.held, self.passing = self.held, "", True
        return held
