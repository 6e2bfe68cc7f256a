"""The speaking character's view of the group (pure)."""

from __future__ import annotations

from roleplay.groups.engine import Sheet, joined, members_block, named, short

MIRA = Sheet("m", "Mira", "A lamp keeper.\n\nShe has a long past.", "warm", "The gate.")
JON = Sheet("j", "Jon", "", "gruff", "")


def test_members_block_lists_the_others_with_short_descriptions():
    assert members_block("j", [MIRA, JON]) == (
        "[Other characters in this conversation]\n- Mira: A lamp keeper."
    )
    assert members_block("m", [MIRA, JON]).endswith("\n- Jon")
    assert members_block("m", [MIRA]) == ""


def test_short_cuts_at_a_word():
    text = "word " * 100
    cut = short(text, 22)
    assert cut == "word word word word…"


def test_joined_puts_each_members_field_under_its_name():
    assert joined([MIRA, JON], "personality") == "Mira: warm\nJon: gruff"
    assert joined([MIRA, JON], "scenario") == "Mira: The gate."


def test_named_prefixes_only_other_members_replies():
    names = {"m": "Mira", "j": "Jon"}
    assert named("assistant", "Hello.", "j", "m", names) == "Jon: Hello."
    assert named("assistant", "Hello.", "m", "m", names) == "Hello."
    assert named("user", "Hello.", "j", "m", names) == "Hello."
    assert named("assistant", "Hello.", None, "m", names) == "Hello."
