"""The conversation history as the capabilities share it (the shared kernel: no app imported).

Messages are stored by the memory app; the story capability reads them too (the evidence a
story was built from) and must hear when they change. Capabilities never import each other,
so both go through this port: memory sends :data:`history_changed` (``memory.signals`` names
this very signal) and registers its reader of message texts at start-up
(:func:`provide_texts`); story listens to the signal and reads through
:func:`message_texts`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.dispatch import Signal

history_changed = Signal()
"""``(tenant, session_id, reason)``: a conversation's history changed shape (deleted,
trimmed, edited, another alternative shown), sent once the change commits."""

TextsReader = Callable[[str, Iterable[str]], dict[str, str]]
_reader: list[TextsReader] = []


def provide_texts(reader: TextsReader) -> None:
    """Install the message store's reader (``memory.selectors.message_texts``)."""
    _reader[:] = [reader]


def message_texts(session_id: str, ids: Iterable[str]) -> dict[str, str]:
    """Message id -> its text now, for those of ``ids`` still in conversation
    ``session_id``; a LookupError when no message store is installed."""
    if not _reader:
        raise LookupError("no message store is installed (the memory app provides one)")
    return _reader[0](session_id, ids)
