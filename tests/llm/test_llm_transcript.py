"""Chat-to-transcript rendering for base models."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.llm.transcript import message_text, render_transcript


def test_system_text_first_then_named_lines_ending_with_the_character() -> None:
    transcript = render_transcript(
        [
            {"role": "system", "content": "A rainy night at the Copper Kettle."},
            {"role": "user", "content": "Is the kitchen still open?"},
            {"role": "assistant", "content": "For you, always."},
            {"role": "user", "content": "Then soup, please."},
        ]
    )
    assert transcript.prompt == (
        "A rainy night at the Copper Kettle.\n\n"
        "User: Is the kitchen still open?\n"
        "Character: For you, always.\n"
        "User: Then soup, please.\n"
        "Character:"
    )
    assert transcript.speaker == "Character"
    assert transcript.stop == ["\nCharacter:", "\nUser:"]


def test_names_come_from_message_name_fields() -> None:
    transcript = render_transcript(
        [
            {"role": "user", "name": "Bram", "content": "Evening, Alice."},
            {"role": "assistant", "name": "Alice", "content": "Evening, Bram."},
            {"role": "user", "name": "Cora", "content": "And me?"},
        ]
    )
    assert transcript.prompt.splitlines() == [
        "Bram: Evening, Alice.",
        "Alice: Evening, Bram.",
        "Cora: And me?",
        "Alice:",
    ]
    assert transcript.speaker == "Alice"
    assert set(transcript.stop) == {"\nBram:", "\nAlice:", "\nCora:", "\nUser:"}


def test_explicit_names_win_over_defaults() -> None:
    transcript = render_transcript(
        [{"role": "user", "content": "hi"}], character_name="Dr. Who: Ten", user_name="Rose"
    )
    assert transcript.prompt == "Rose: hi\nDr. Who Ten:"  # a colon would fake a new speaker
    assert "\nRose:" in transcript.stop


def test_an_empty_named_assistant_message_selects_the_next_speaker() -> None:
    transcript = render_transcript(
        [
            {"role": "user", "content": "Who answers?"},
            {"role": "assistant", "name": "Bard", "content": ""},
        ]
    )
    assert transcript.prompt.endswith("User: Who answers?\nBard:")


def test_later_system_messages_are_narration_in_place() -> None:
    transcript = render_transcript(
        [
            {"role": "system", "content": "Scene."},
            {"role": "user", "content": "Knock knock."},
            {"role": "system", "content": "Thunder rolls."},
            {"role": "tool", "content": "dice: 17"},
        ]
    )
    assert transcript.prompt == (
        "Scene.\n\nUser: Knock knock.\n[Thunder rolls.]\nTool: dice: 17\nCharacter:"
    )


def test_content_parts_are_flattened() -> None:
    parts = [
        {"type": "text", "text": "look "},
        {"type": "image_url"},
        {"type": "text", "text": "!"},
    ]
    assert message_text(parts) == "look !"
    assert message_text(None) == ""


names = st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=12)
lines = st.text(
    alphabet=st.characters(categories=["L", "N", "P", "Zs"], exclude_characters=":"),
    min_size=1,
    max_size=40,
).filter(str.strip)


@settings(deadline=None)  # shared CI machines stall; correctness, not speed
@given(
    turns=st.lists(st.tuples(st.sampled_from(["user", "assistant"]), lines), max_size=12),
    character=names,
    user=names,
)
def test_every_turn_appears_in_order_and_the_prompt_ends_on_the_character(
    turns: list[tuple[str, str]], character: str, user: str
) -> None:
    messages = [{"role": role, "content": text} for role, text in turns]
    transcript = render_transcript(messages, character_name=character, user_name=user)
    body = transcript.prompt.split("\n")
    assert body[-1] == f"{character}:"
    expected = [f"{character if r == 'assistant' else user}: {t.strip()}" for r, t in turns]
    assert body[:-1] == expected
    assert f"\n{user}:" in transcript.stop
    assert f"\n{character}:" in transcript.stop
