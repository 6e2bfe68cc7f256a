"""A reasoning model's scratchpad before its answer, kept apart from the answer. Pure.

Servers that parse reasoning hand it over apart (``reasoning_content`` or ``reasoning``,
read by the provider); others leave it in the content, ``<think>…</think>`` first and then
the answer. The answer never carries it: a reply that did would feed it back into every
later prompt, and the background's roles parse the answer. The scratchpad is kept beside
the reply (``docs/llm.md``, "Reasoning"): the play page shows it on demand, and a preset
may send it back (:func:`with_reasoning`).

- A complete answer (:func:`split_reasoning`) loses a leading block, or the text before a
  lone closing tag when the chat template opened the block in the prompt; both are the
  reasoning.
- A streamed answer (:class:`StreamFilter`) holds back what could still open a block, keeps
  a block that opened first as :attr:`StreamFilter.reasoning`, and passes everything else
  through untouched. It cannot know a lone closing tag is coming, so that case streams as
  it came.

A block that never closes (the answer was cut short) is given back as it came: nothing is
lost, and the caller's own checks see it.
"""

from __future__ import annotations

import re

_TAGS = ("think", "thinking", "thought", "reasoning")
_NAMES = "|".join(_TAGS)
_LEADING = re.compile(rf"^\s*<({_NAMES})>(.*?)</\1\s*>\s*", re.IGNORECASE | re.DOTALL)
_CLOSE_ONLY = re.compile(rf"^((?:(?!<(?:{_NAMES})>).)*?)</({_NAMES})\s*>\s*", re.I | re.DOTALL)
_OPEN = re.compile(rf"<({_NAMES})>", re.IGNORECASE)
_OPENINGS = tuple(f"<{tag}>" for tag in _TAGS)

PREFIX, SUFFIX = "<think>\n", "\n</think>"  # how a preset sends it back (SillyTavern's)


def split_reasoning(content: str) -> tuple[str, str]:
    """``(reasoning, answer)``: a leading reasoning block (or the text before a lone
    closing tag) and what follows it; ``("", content)`` when it has neither."""
    found = _LEADING.match(content) or _CLOSE_ONLY.match(content)
    if found is None:
        return "", content
    inner = found.group(2) if found.re is _LEADING else found.group(1)
    return inner.strip(), content[found.end() :]


def strip_reasoning(content: str) -> str:
    """``content`` without a leading reasoning block (or the text before a lone closing
    tag); unchanged when it has neither."""
    return split_reasoning(content)[1]


def joined(*pieces: str) -> str:
    """Reasoning from several places (a server's own field, a block, several segments),
    in order, blank ones left out."""
    return "\n\n".join(piece.strip() for piece in pieces if piece and piece.strip())


def with_reasoning(content: str, reasoning: str) -> str:
    """A history reply as a preset that sends reasoning back wants it: the block first."""
    if not reasoning:
        return content
    return f"{PREFIX}{reasoning}{SUFFIX}\n{content}"


class StreamFilter:
    """Feed each streamed piece to :meth:`feed` and send what it returns; at the end send
    :meth:`finish`'s. Once :attr:`passing`, every piece comes back as it went in. The block
    it held back, without its tags, is :attr:`reasoning` once it closed."""

    def __init__(self) -> None:
        self.passing = False
        self.held = ""  # what came so far and is not decided (or the open block)
        self.closing = ""  # the open block's closing tag, lower case
        self.opened_at = 0  # where the open block's text starts in ``held``
        self.searched = 0  # ``held`` before this holds no closing tag
        self.after = False  # the block closed: the answer's leading blank is dropped
        self.reasoning = ""

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
            self.opened_at = len(self.held) - len(start) + opened.end()
            return self._inside()
        lowered = start.lower()
        if not start or any(opening.startswith(lowered) for opening in _OPENINGS):
            return ""  # blank, or what may still become an opening tag: wait
        return self._pass()

    @property
    def so_far(self) -> str:
        """The reasoning seen so far: the closed block's, or the open block's text yet."""
        if self.closing:
            return self.held[self.opened_at :].strip()
        return self.reasoning

    def finish(self) -> str:
        """What is still held back: nothing after a closed block, else the held text."""
        return "" if self.passing or self.after else self._pass()

    def _inside(self) -> str:
        start = max(self.opened_at, self.searched - len(self.closing) + 1)
        end = self.held[start:].lower().find(self.closing)
        if end < 0:  # a long block is searched once, not again with every piece
            self.searched = len(self.held)
            return ""
        end += start
        self.reasoning = self.held[self.opened_at : end].strip()
        rest = self.held[end + len(self.closing) :]
        self.held, self.closing, self.after = "", "", True
        return self.feed(rest)

    def _pass(self) -> str:
        held, self.held, self.passing = self.held, "", True
        return held
