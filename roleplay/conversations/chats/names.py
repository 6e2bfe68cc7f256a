"""The names a chat file writes where a card writes ``{{char}}`` and ``{{user}}`` (and the
older ``<BOT>`` and ``<USER>``), in any case: how an opening reads once a tool has shown it.
Pure."""

from __future__ import annotations

_CHARACTER = ("{{char}}", "<bot>")
_USER = ("{{user}}", "<user>")


def fill_names(text: str, *, character: str, user: str) -> str:
    for macro in _CHARACTER + _USER:
        text = _replace_any_case(text, macro, character if macro in _CHARACTER else user)
    return text


def _replace_any_case(text: str, macro: str, value: str) -> str:
    lowered, out, start = text.lower(), [], 0
    while (found := lowered.find(macro, start)) >= 0:
        out += [text[start:found], value]
        start = found + len(macro)
    return "".join(out) + text[start:]
