"""A SillyTavern chat's author's note, both ways."""

from __future__ import annotations

import pytest

from roleplay.conversations.chats.notes import metadata_from_note, note_from_metadata


def test_a_chat_note_becomes_ours_and_back():
    metadata = {
        "note_prompt": "Keep the storm in every scene.",
        "note_interval": 2,
        "note_position": 2,
        "note_depth": 6,
        "note_role": 1,
        "objective": {"ignored": True},
    }
    note = note_from_metadata(metadata)
    assert note == {
        "content": "Keep the storm in every scene.",
        "position": "before_prompt",
        "depth": 6,
        "frequency": 2,
        "role": "user",
    }
    back = metadata_from_note(note)
    assert back == {k: v for k, v in metadata.items() if k != "objective"}


@pytest.mark.parametrize(
    "metadata",
    [
        None,
        [],
        {},
        {"note_prompt": "  "},
        {"note_prompt": 7},
        {"note_prompt": "x", "note_depth": -3},
    ],
)
def test_no_note_or_one_we_cannot_keep(metadata):
    assert note_from_metadata(metadata) is None


def test_defaults_and_text_numbers():
    assert note_from_metadata({"note_prompt": "x", "note_depth": "2", "note_role": True}) == {
        "content": "x", "position": "in_chat", "depth": 2, "frequency": 1, "role": "system",
    }  # fmt: skip
    assert metadata_from_note({}) == {} and metadata_from_note(None) == {}
