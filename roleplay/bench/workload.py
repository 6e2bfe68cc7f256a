"""The benchmark's fixed model reply: 200 cl100k tokens streamed in 20 chunks, no delay."""

from __future__ import annotations

from functools import lru_cache

from console.tokens import count_tokens
from roleplay.llm.scripted_server import Reply

REPLY_TOKENS = 200
REPLY_CHUNKS = 20

_PROSE = (
    "The keeper climbs the spiral stair each evening, trims the wick, polishes the great "
    "lens and watches the grey water for the lights of ships that come in from the north. "
    "Storms roll over the headland, gulls cry above the rocks, and the old logbook fills "
    "with careful notes about wind, tide, fog and every vessel that passes the point. "
)


@lru_cache(maxsize=4)
def reply_text(tokens: int = REPLY_TOKENS) -> str:
    """Deterministic prose of exactly ``tokens`` cl100k tokens (whole words only)."""
    words = (_PROSE * (tokens // 40 + 2)).split()
    text = ""
    for word in words:
        candidate = f"{text} {word}" if text else word
        if count_tokens(candidate) > tokens:
            break
        text = candidate
    # Pad with single-token words if whole words stopped short of the count.
    while count_tokens(text) < tokens:
        text += " sea"
    if count_tokens(text) != tokens:
        raise RuntimeError(f"could not build a {tokens}-token reply")
    return text


def bench_reply(tokens: int = REPLY_TOKENS, chunks: int = REPLY_CHUNKS) -> Reply:
    return Reply(content=reply_text(tokens), chunks=chunks)
