"""chunk_text: 1,200-character windows every 1,000 characters, never empty."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worldbook.engine.chunking import Chunk, chunk_text


def test_short_text_is_one_chunk():
    assert chunk_text("灰港没有电力。") == [Chunk(0, 0, 7, "灰港没有电力。")]
    assert len(chunk_text("x" * 1200)) == 1


def test_empty_text_has_no_chunks():
    assert chunk_text("") == []


def test_windows_overlap_by_200():
    text = "".join(chr(0x4E00 + i % 500) for i in range(3500))
    chunks = chunk_text(text)
    assert [(c.start, c.end) for c in chunks] == [
        (0, 1200),
        (1000, 2200),
        (2000, 3200),
        (3000, 3500),
    ]
    assert chunks[0].text[1000:] == chunks[1].text[:200]


def test_text_just_past_one_window():
    assert [(c.start, c.end) for c in chunk_text("a" * 1201)] == [(0, 1200), (1000, 1201)]


@pytest.mark.parametrize(("size", "step"), [(0, 1), (10, 0), (10, 11)])
def test_bad_parameters(size, step):
    with pytest.raises(ValueError):
        chunk_text("abc", size=size, step=step)


@given(st.text(max_size=5000), st.integers(1, 300), st.integers(1, 300))
def test_chunks_cover_the_text_in_bounded_overlapping_windows(text, size, step):
    step = min(step, size)
    chunks = chunk_text(text, size=size, step=step)
    if not text:
        assert chunks == []
        return
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for index, chunk in enumerate(chunks):
        assert chunk.index == index
        assert 0 < len(chunk.text) <= size
        assert chunk.text == text[chunk.start : chunk.end]
        if index:
            assert chunk.start - chunks[index - 1].start == step
            assert chunk.start <= chunks[index - 1].end  # no gap
    assert (
        "".join(c.text[: step if i < len(chunks) - 1 else None] for i, c in enumerate(chunks))
        == text
    )
