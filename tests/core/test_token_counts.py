"""Token counts: remembered counts are the counts, for short texts and for long ones kept
only under their digest."""

from __future__ import annotations

from console import tokens


def _encoded(text: str) -> int:
    return len(tokens._encoding().encode(text, disallowed_special=()))


def test_long_texts_are_counted_and_remembered_by_digest():
    long = "Mira keeps the lantern lit while the river rises. " * 200
    assert len(long) > tokens.CACHED_MAX_CHARS
    first = tokens.count_tokens(long)
    assert first == _encoded(long)
    assert tokens.count_tokens(long) == first
    # Same length, different text: a different entry, not a collision on length.
    other = long.replace("lantern", "candles")
    assert len(other) == len(long)
    assert tokens.count_tokens(other) == _encoded(other)


def test_the_long_text_memory_is_bounded():
    for i in range(tokens._LONG_MAX + 20):
        tokens.count_tokens(f"{i} " + "x y " * 1100)
    assert len(tokens.CL100K._long) <= tokens._LONG_MAX


def test_short_texts_and_lone_surrogates_count():
    assert tokens.count_tokens("") == 0
    assert tokens.count_tokens("hello there") == _encoded("hello there")
    assert tokens.count_tokens("\ud800" * 5000) > 0
