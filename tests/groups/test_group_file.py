"""The pure reading and writing of SillyTavern's group file, and how a member reference
finds a character (``roleplay.conversations.chats.group_file``)."""

from __future__ import annotations

import json

import pytest

from roleplay.conversations.chats.errors import GroupFileError, GroupFileInvalid
from roleplay.conversations.chats.group_file import (
    GroupOut,
    avatar_file,
    match_member,
    match_members,
    read_group,
    write_group,
)


def group(**fields) -> bytes:
    return json.dumps({"id": "1", "name": "G", "members": ["A.png", "B.png"], **fields}).encode()


@pytest.mark.parametrize("mode", ["natural", "list", "manual", "pooled"])
@pytest.mark.parametrize("join", [False, True])
def test_what_is_written_reads_back(mode, join):
    out = GroupOut(
        id="1", name="The Lighthouse", members=("Mira.png", "Jon.png"), muted=("Jon.png",),
        group_mode=mode, join_cards=join, auto_delay_ms=2500, chat_id="Mira - chat",
        created_ms=1704103200000, allow_self_responses=join,
    )  # fmt: skip
    read = read_group(write_group(out))
    assert read.allow_self_responses is join
    assert (read.name, read.members, read.muted) == (out.name, out.members, {"Jon.png"})
    assert (read.group_mode, read.join_cards, read.auto_delay_ms) == (mode, join, 2500)
    assert read.chat_id == "Mira - chat" and read.dropped == ()


def test_settings_sillytavern_has_and_we_do_not_are_named():
    read = read_group(group(generation_mode=2, allow_self_responses=True, auto_mode_delay=600))
    assert read.join_cards and read.auto_delay_ms == 60_000 and read.allow_self_responses
    assert read.dropped == ("generation_mode", "auto_mode_delay")


def test_defaults_are_sillytavern_s():
    read = read_group(group())
    assert (read.group_mode, read.join_cards, read.auto_delay_ms) == ("natural", False, 5000)
    assert read.muted == frozenset()


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"null", GroupFileError),
        (group(members=None), GroupFileError),
        (group(members=[{"avatar": "A.png"}]), GroupFileError),
        (group(members=["A.png", " "]), GroupFileError),
        (group(members=["x" * 201]), GroupFileError),
        (group(disabled_members="A.png"), GroupFileError),
        (group(generation_mode=True), GroupFileError),
        (group(auto_mode_delay=-1), GroupFileError),
        (group(name=["G"]), GroupFileError),
        (b"[" * 100_000, GroupFileError),
        (group(members=["A.png", "A.png"]), GroupFileInvalid),
    ],
)
def test_bad_files_are_refused(data, error):
    with pytest.raises(error):
        read_group(data)


CAST = [("1", "Mira Vale"), ("2", "Jon"), ("3", "Dr. Ada")]


@pytest.mark.parametrize(
    ("ref", "hint", "found"),
    [
        ("Mira Vale.png", "", ["1"]),
        ("Mira_Vale.png", "", ["1"]),  # the name its card is exported under
        ("mira vale.webp", "", ["1"]),
        ("Jon", "", ["2"]),
        ("Dr._Ada.png", "", ["3"]),
        ("default_Ada.png", "Dr. Ada", ["3"]),  # the name the chat shows with it
        ("Nobody.png", "", []),
    ],
)
def test_a_member_is_found_by_avatar_file_or_name(ref, hint, found):
    assert match_member(ref, CAST, hint) == found


def test_exported_avatar_files_find_their_characters():
    refs = [avatar_file(name) for _, name in CAST]
    assert match_members(refs, CAST, {}) == ["1", "2", "3"]


def test_unknown_ambiguous_and_repeated_members_are_named():
    for refs, cast, code in [
        (["Zed.png"], CAST, "unknown_member"),
        (["Jon.png"], [*CAST, ("4", "Jon")], "member_ambiguous"),
        (["Jon.png", "jon.png"], CAST, "duplicate_member"),
    ]:
        with pytest.raises(GroupFileInvalid) as caught:
            match_members(refs, cast, {})
        assert caught.value.code == code and caught.value.details["member"] == refs[-1]
