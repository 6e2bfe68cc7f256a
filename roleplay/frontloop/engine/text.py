"""Text from models and players made safe to keep: bounded, and storable in PostgreSQL.

The loop records what a controller asked for (a tool name, an argument, an error) in the
turn trace, which is jsonb: a NUL or a lone surrogate there fails the write as a 500, and a
300,000-character tool name would bloat every trace. Whatever the loop records from outside
goes through :func:`clip` first (``console.storable`` says why the two characters fail).
"""

from __future__ import annotations

REPLACEMENT = "\ufffd"


def clip(text: object, limit: int = 200) -> str:
    """``text`` as a string of at most ``limit`` characters (a cut one ends in ``…``), with
    NULs and lone surrogates replaced by U+FFFD; a non-string is shown by its type name."""
    if not isinstance(text, str):
        return f"<{type(text).__name__}>"
    cut = len(text) > limit
    head = text[: limit - 1] if cut else text
    clean = "".join(REPLACEMENT if _unstorable(ch) else ch for ch in head)
    return clean + "…" if cut else clean


def _unstorable(ch: str) -> bool:
    return ch == "\x00" or "\ud800" <= ch <= "\udfff"
