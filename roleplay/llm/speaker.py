"""A reply's own speaker label, dropped from its start as it streams. Pure.

Chat models, small ones most, often open a reply with the character's name as in a
script (``"\\nCaptain Vela: The wind..."``, ``"**Vela:** ..."``); SillyTavern drops it by
default, and so does a turn here. :class:`SpeakerLabel` holds back only what could still
become such a label (and the white space before it), drops the label with the spaces
after it, and from then on passes every piece through untouched. A reply that does not
open with the label loses only its leading white space.
"""

from __future__ import annotations


class SpeakerLabel:
    """Feed a reply's pieces in order; :meth:`finish` gives back what is still held."""

    def __init__(self, name: str | None) -> None:
        """``name`` None: pass everything through (a continue, whose start is not new)."""
        self.open = name is None  # the start is settled: pass everything on
        name = (name or "").strip()
        self.labels = (f"{name}:", f"**{name}**:", f"**{name}:**") if name else ()
        self.held = ""
        self.after_label = False  # drop the spaces that follow a dropped label

    def feed(self, text: str) -> str:
        if self.open:
            return self._after_label(text)
        self.held += text
        head = self.held.lstrip()
        if not head:
            return ""
        for label in self.labels:
            if head.startswith(label):
                self.open, self.after_label, self.held = True, True, ""
                return self._after_label(head[len(label) :])
            if label.startswith(head):
                return ""  # may still become the label
        self.open, self.held = True, ""
        return head

    def finish(self) -> str:
        """What is held when the reply ends: a start that never settled, as it came
        (without leading white space)."""
        held, self.held, self.open = self.held.lstrip(), "", True
        return held

    def _after_label(self, text: str) -> str:
        if self.after_label:
            text = text.lstrip()
            if text:
                self.after_label = False
        return text
