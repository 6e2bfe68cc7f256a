"""A reply's own speaker label is dropped from its start, however the stream cuts it."""

from __future__ import annotations

import pytest

from roleplay.llm.speaker import SpeakerLabel

CASES = [
    ("Mira: The lamp is lit.", "The lamp is lit."),
    ("\n\nMira:  The lamp is lit.", "The lamp is lit."),
    ("**Mira:** The lamp is lit.", "The lamp is lit."),
    ("**Mira**:\nThe lamp is lit.", "The lamp is lit."),
    ("Mira waves. Mira: hello", "Mira waves. Mira: hello"),
    ("  The lamp. Mira: no", "The lamp. Mira: no"),
    ("Ann: you speak for me", "Ann: you speak for me"),
    ("Mir", "Mir"),
    ("Mira:", ""),
    ("", ""),
]


def run(pieces: list[str], name: str = "Mira") -> str:
    label = SpeakerLabel(name)
    return "".join(label.feed(piece) for piece in pieces) + label.finish()


@pytest.mark.parametrize(("reply", "expected"), CASES)
def test_every_two_cut_split_gives_the_same_reply(reply, expected):
    for i in range(len(reply) + 1):
        for j in range(i, len(reply) + 1):
            assert run([reply[:i], reply[i:j], reply[j:]]) == expected, (i, j)


def test_once_settled_pieces_pass_through_untouched():
    label = SpeakerLabel("Mira")
    assert label.feed("The") == "The"
    assert label.feed(" Mira:") == " Mira:" and label.feed("  ") == "  "


def test_no_name_only_drops_leading_white_space():
    assert run(["\n", " Mira: hi"], name="") == "Mira: hi"


def test_a_continue_passes_everything_through():
    assert run([" at", " dawn."], name=None) == " at dawn."
