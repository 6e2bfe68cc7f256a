"""Fixed-window chunking of entry text for the vector index.

The seed indexes an entry by taking up to 1,200 characters every 1,000 characters, so
neighbouring chunks overlap by 200. The overlap keeps a sentence that straddles a boundary
whole in at least one chunk, which is what lets a vector search find it. Character windows
(not tokens) keep the split independent of any tokenizer and stable across versions.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SIZE = 1200
DEFAULT_STEP = 1000


@dataclass(frozen=True, slots=True)
class Chunk:
    """One window of an entry's text: ``text == source[start:end]``."""

    index: int
    start: int
    end: int
    text: str


def chunk_text(text: str, size: int = DEFAULT_SIZE, step: int = DEFAULT_STEP) -> list[Chunk]:
    """Split ``text`` into windows of at most ``size`` characters starting every ``step``.

    Text no longer than ``size`` is one chunk; empty text has no chunks, so no empty chunk is
    ever embedded. The last window always reaches the end of the text.
    """
    if size <= 0:
        raise ValueError("size must be positive")
    if step <= 0 or step > size:
        raise ValueError("step must be in 1..size so that no text is skipped")
    length = len(text)
    if length == 0:
        return []
    chunks: list[Chunk] = []
    start = 0
    while True:
        end = min(start + size, length)
        chunks.append(Chunk(index=len(chunks), start=start, end=end, text=text[start:end]))
        if end >= length:
            return chunks
        start += step
