"""The <image_prompt> block: parsing, limits, and the degradation when the producer fails."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.frontloop.engine.image_prompt import (
    MAX_PROMPT_CHARS,
    BlockRejected,
    ImagePrompt,
    choose_prompt,
    parse_block,
)

KEY = "Mira presses the brass key into the guard's palm."


@pytest.mark.parametrize(
    ("text", "camera", "aspect"),
    [
        (f'<image_prompt camera="close-up" aspect="3:4">{KEY}</image_prompt>', "close-up", "3:4"),
        (
            f"<IMAGE_PROMPT Camera = 'Close Up'  ASPECT='16 : 9' >\n {KEY}\n</ Image_Prompt >",
            "close-up",
            "16:9",
        ),
        (f"Sure! <image_prompt camera=wide>{KEY}</image_prompt> Hope it helps.", "wide", None),
        (f"<image_prompt>{KEY}</image_prompt>", None, None),
        (
            f'<image_prompt camera="medium_shot" aspect="9:16">{KEY}</image_prompt>',
            "medium",
            "9:16",
        ),
        (
            f'<image_prompt camera="closeup">{KEY}</image_prompt><image_prompt>x</image_prompt>',
            "close-up",
            None,
        ),
    ],
)
def test_blocks_read_tolerantly(text, camera, aspect):
    assert parse_block(text) == ImagePrompt(KEY, camera, aspect)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (KEY, "no <image_prompt> block"),
        (f"<image_prompt>{KEY}", "not closed"),
        ("<image_prompt camera='wide'>   </image_prompt>", "empty"),
        (f'<image_prompt camera="fisheye">{KEY}</image_prompt>', "camera 'fisheye'"),
        (f'<image_prompt aspect="5:4">{KEY}</image_prompt>', "aspect '5:4'"),
        (f'<image_prompt style="noir">{KEY}</image_prompt>', "unknown attribute 'style'"),
        (f'<image_prompt camera="wide" camera="medium">{KEY}</image_prompt>', "twice"),
        (f"<image_prompt camera>{KEY}</image_prompt>", "cannot read the attributes"),
        (f'<image_prompt camera="wide" junk>{KEY}</image_prompt>', "cannot read"),
        (None, "not text"),
        (42, "not text"),
    ],
)
def test_bad_blocks_are_rejected_with_a_reason(text, reason):
    result = parse_block(text)
    assert isinstance(result, BlockRejected)
    assert reason in result.reason


def test_description_length_plus_minus_one():
    at = "x" * MAX_PROMPT_CHARS
    assert parse_block(f"<image_prompt>{at}</image_prompt>") == ImagePrompt(at)
    over = parse_block(f"<image_prompt>{at}y</image_prompt>")
    assert isinstance(over, BlockRejected) and "longer than" in over.reason


def test_hostile_text():
    assert isinstance(parse_block("<image_prompt " * 30_000), BlockRejected)
    assert isinstance(parse_block("x" * 300_000 + "<image_prompt>a</image_prompt>"), BlockRejected)
    parsed = parse_block("<image_prompt>a\x00b\ud800c</image_prompt>")
    assert isinstance(parsed, ImagePrompt)
    json.dumps(parsed.block(), ensure_ascii=False).encode("utf-8")
    assert "\x00" not in parsed.text


def test_block_round_trip():
    prompt = ImagePrompt(KEY, "wide", "16:9")
    assert prompt.block() == f'<image_prompt camera="wide" aspect="16:9">{KEY}</image_prompt>'
    assert parse_block(prompt.block()) == prompt
    assert ImagePrompt(KEY).block() == f"<image_prompt>{KEY}</image_prompt>"


def test_the_producers_block_is_used():
    choice = choose_prompt(f'<image_prompt camera="wide">{KEY}</image_prompt>', "segment")
    assert (choice.source, choice.degraded) == ("producer", None)
    assert choice.prompt == ImagePrompt(KEY, "wide")


def test_producer_failed_uses_the_segments_block():
    segment = f'The guard nods. <image_prompt aspect="4:3">{KEY}</image_prompt>'
    choice = choose_prompt(None, segment, producer_error="timeout")
    assert choice.source == "segment_block"
    assert choice.prompt == ImagePrompt(KEY, None, "4:3")
    assert choice.degraded == "producer_failed: timeout"


def test_invalid_producer_answer_uses_the_segments_text():
    choice = choose_prompt("I cannot draw that.", "  The guard   takes\n the key.  ")
    assert choice.source == "segment_text"
    assert choice.prompt == ImagePrompt("The guard takes the key.")
    assert choice.degraded == "producer_invalid: no <image_prompt> block"
    assert choice.to_json()["prompt"] == "<image_prompt>The guard takes the key.</image_prompt>"


def test_a_broken_block_in_the_segment_falls_to_its_text_without_the_tags():
    choice = choose_prompt(None, '<image_prompt camera="fisheye">The gate opens.</image_prompt>')
    assert choice.source == "segment_text"
    assert choice.prompt == ImagePrompt("The gate opens.")
    assert choice.degraded == "producer_failed: no answer"


def test_the_segments_text_is_bounded():
    choice = choose_prompt(None, "word " * 100_000, producer_error="upstream_error")
    assert choice.prompt is not None
    assert len(choice.prompt.text) == MAX_PROMPT_CHARS


def test_nothing_to_draw():
    choice = choose_prompt(None, "   ", producer_error="timeout")
    assert choice.prompt is None and choice.source is None
    assert "no text" in choice.degraded


@settings(max_examples=400, deadline=None)
@given(
    st.text()
    | st.builds(
        lambda a, b, c: f"<image_prompt {a}>{b}</image_prompt>{c}",
        st.text(),
        st.text(),
        st.text(),
    )
)
def test_parsing_never_raises(text):
    result = parse_block(text)
    if isinstance(result, ImagePrompt):
        assert 0 < len(result.text) <= MAX_PROMPT_CHARS
        result.text.encode("utf-8")
        assert parse_block(result.block()) == result or "</image_prompt" in result.text.lower()
    choice = choose_prompt(text, text)
    if choice.prompt is not None:
        json.dumps(choice.to_json(), ensure_ascii=False).encode("utf-8")
