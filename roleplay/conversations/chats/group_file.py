"""A SillyTavern group definition (``groups/<id>.json``) read into a group's members and
settings, and written back. Pure.

SillyTavern keeps a group as one JSON object: ``id``, ``name``, ``members`` (the members'
avatar file names, ``Mira.png``, in the group's order), ``disabled_members`` (muted ones),
``activation_strategy`` (0 natural, 1 list, 2 manual, 3 pooled), ``generation_mode``
(0 swap, 1 append: the cards joined, 2 append with the disabled members' cards too),
``allow_self_responses``, ``auto_mode_delay`` (seconds), ``chat_id`` (the open chat's
file, ``group chats/<chat_id>.jsonl``), ``chats``, ``fav``, ``avatar_url``,
``chat_metadata``, ``past_metadata``, ``date_added``, ``date_last_chat``, ...

What a conversation keeps: the members in order (the first is the conversation's
character), the disabled ones as muted, ``group_mode``, ``join_cards`` (``generation_mode``
1 or 2), ``allow_self_responses`` and ``auto_delay_ms`` (the delay, at most a minute). What
it does not keep is named in :attr:`GroupFile.dropped`: ``generation_mode`` 2 (read as 1)
and a delay over a minute (cut to one). The group's avatar and its other chats are not
read: a group file comes with the one chat it is imported with.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from console.storable import unstorable_at
from roleplay.characters.cards.build import file_stem
from roleplay.conversations.chats.errors import (
    DUPLICATE_MEMBER,
    EMPTY_GROUP,
    INVALID_TEXT,
    MEMBER_AMBIGUOUS,
    UNKNOWN_MEMBER,
    GroupFileError,
    GroupFileInvalid,
    GroupFileTooLarge,
)

MAX_GROUP_BYTES = 1024 * 1024
MAX_LISTED = 1000  # members a file may list before it is refused unread
MAX_NAME_CHARS = 200
MAX_DELAY_MS = 60_000
AVATAR_SUFFIXES = (".png", ".webp", ".jpg", ".jpeg", ".json", ".charx")
MODES = ("natural", "list", "manual", "pooled")  # activation_strategy 0..3
SWAP, APPEND, APPEND_DISABLED = 0, 1, 2


@dataclass(frozen=True)
class GroupFile:
    name: str
    members: tuple[str, ...]  # avatar file names (or names), in the group's order
    muted: frozenset[str]  # the members also in ``disabled_members``
    group_mode: str
    join_cards: bool
    auto_delay_ms: int
    chat_id: str = ""
    allow_self_responses: bool = False
    dropped: tuple[str, ...] = ()  # settings read but not kept, for the report


@dataclass(frozen=True)
class GroupOut:
    """A group to write: ``members`` as avatar file names, the first the conversation's."""

    id: str
    name: str
    members: tuple[str, ...]
    muted: tuple[str, ...]
    group_mode: str
    join_cards: bool
    auto_delay_ms: int
    chat_id: str
    created_ms: int
    allow_self_responses: bool = False


def avatar_file(name: str) -> str:
    """The avatar file name SillyTavern would give a character card named ``name``."""
    return f"{file_stem(name)}.png"


def avatar_stem(avatar: str) -> str:
    """``Mira.png`` -> ``Mira``: a member reference without its card file's extension."""
    lowered = avatar.lower()
    for suffix in AVATAR_SUFFIXES:
        if lowered.endswith(suffix) and len(avatar) > len(suffix):
            return avatar[: -len(suffix)]
    return avatar


def read_group(data: bytes) -> GroupFile:
    """The group in ``data``; a :class:`GroupFileError` when it is not one we read."""
    if len(data) > MAX_GROUP_BYTES:
        raise GroupFileTooLarge(message=f"a group file may have at most {MAX_GROUP_BYTES} bytes")
    try:
        item = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise GroupFileError(message="the group file is not UTF-8 text") from exc
    except RecursionError as exc:
        raise GroupFileError(message="the group file nests JSON too deeply") from exc
    except ValueError as exc:
        raise GroupFileError(message=f"the group file is not JSON: {exc}") from exc
    if not isinstance(item, dict):
        raise GroupFileError(message="a group file is a JSON object")
    members = _names(item, "members")
    if not members:
        raise GroupFileInvalid(EMPTY_GROUP, "the group has no members", {"field": "members"})
    seen: set[str] = set()
    for member in members:
        if member in seen:
            raise GroupFileInvalid(
                DUPLICATE_MEMBER, f"{member!r} is listed twice", {"member": member}
            )
        seen.add(member)
    disabled = set(_names(item, "disabled_members", required=False))
    name = _text(item, "name")[:MAX_NAME_CHARS]
    dropped = []
    strategy = _number(item, "activation_strategy", 0)
    if strategy not in range(len(MODES)):
        raise _field("activation_strategy", f"is one of 0..{len(MODES) - 1}")
    generation = _number(item, "generation_mode", SWAP)
    if generation not in (SWAP, APPEND, APPEND_DISABLED):
        raise _field("generation_mode", "is 0, 1 or 2")
    if generation == APPEND_DISABLED:
        dropped.append("generation_mode")
    delay = _delay(item)
    if delay > MAX_DELAY_MS:
        dropped.append("auto_mode_delay")
    return GroupFile(
        name=name,
        members=tuple(members),
        muted=frozenset(m for m in members if m in disabled),
        group_mode=MODES[strategy],
        join_cards=generation != SWAP,
        auto_delay_ms=min(delay, MAX_DELAY_MS),
        chat_id=_text(item, "chat_id")[:MAX_NAME_CHARS],
        allow_self_responses=item.get("allow_self_responses") is True,
        dropped=tuple(dropped),
    )


def write_group(group: GroupOut) -> bytes:
    """The group as SillyTavern's ``groups/<id>.json``."""
    delay = group.auto_delay_ms / 1000
    item = {
        "id": group.id,
        "name": group.name,
        "members": list(group.members),
        "avatar_url": "",
        "allow_self_responses": group.allow_self_responses,
        "activation_strategy": MODES.index(group.group_mode),
        "generation_mode": APPEND if group.join_cards else SWAP,
        "disabled_members": list(group.muted),
        "chat_metadata": {},
        "fav": False,
        "chat_id": group.chat_id,
        "chats": [group.chat_id],
        "auto_mode_delay": int(delay) if delay.is_integer() else delay,
        "past_metadata": {},
        "date_added": group.created_ms,
        "create_date": datetime.fromtimestamp(group.created_ms / 1000, tz=UTC).strftime(
            "%Y-%m-%d@%Hh%Mm%Ss"
        ),
        "date_last_chat": group.created_ms,
    }
    return json.dumps(item, ensure_ascii=False, indent=4).encode()


def _names(item: dict[str, Any], key: str, *, required: bool = True) -> list[str]:
    value = item.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise _field(key, "is a list of avatar file names")
    if len(value) > MAX_LISTED:
        raise _field(key, f"lists at most {MAX_LISTED} names")
    out = []
    for index, each in enumerate(value):
        if not isinstance(each, str) or not each.strip() or len(each) > MAX_NAME_CHARS:
            raise _field(f"{key}.{index}", f"is a name of 1 to {MAX_NAME_CHARS} characters")
        _storable(each, f"{key}.{index}")
        out.append(each.strip())
    return out


def _text(item: dict[str, Any], key: str) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise _field(key, "is text")
    text = str(value).strip()
    _storable(text, key)
    return text


def _number(item: dict[str, Any], key: str, default: int) -> int:
    value = item.get(key, default)
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _field(key, "is a whole number")
    return value


def _delay(item: dict[str, Any]) -> int:
    """``auto_mode_delay`` (seconds, SillyTavern's default 5) in milliseconds."""
    value = item.get("auto_mode_delay", 5)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise _field("auto_mode_delay", "is a number of seconds") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _field("auto_mode_delay", "is a number of seconds")
    if value < 0:
        raise _field("auto_mode_delay", "is 0 or more seconds")
    return round(min(value, MAX_DELAY_MS) * 1000)


def _storable(text: str, where: str) -> None:
    found = unstorable_at(text, where)
    if found is not None:
        raise GroupFileInvalid(INVALID_TEXT, found[1], {"field": where})


def _field(key: str, rule: str) -> GroupFileError:
    return GroupFileError(message=f"the group's {key} {rule}", details={"field": key})


def match_member(ref: str, candidates: Sequence[tuple[str, str]], hint: str = "") -> list[str]:
    """The ids of the characters (``(id, name)`` pairs) a member reference ``ref`` names,
    by the first rule that finds any: its avatar file's name is the character's name; is
    the name a card of that character is exported under (:func:`file_stem`); either, in
    any case; the name the group chat shows with that avatar (``hint``), in any case.
    Several ids: the reference is ambiguous."""
    stem = avatar_stem(ref).strip()
    folded = stem.casefold()
    rules = (
        lambda name: name == stem,
        lambda name: file_stem(name) == stem,
        lambda name: name.casefold() == folded or file_stem(name).casefold() == folded,
        lambda name: bool(hint) and name.casefold() == hint.strip().casefold(),
    )
    for rule in rules:
        found = [pk for pk, name in candidates if rule(name)]
        if found:
            return found
    return []


def match_members(
    refs: Sequence[str], candidates: Sequence[tuple[str, str]], hints: Mapping[str, str]
) -> list[str]:
    """The character id of each member reference, in order: an unknown one is
    ``unknown_member``, one several characters answer to ``member_ambiguous``, two that
    are one character ``duplicate_member`` (each 422, naming the member)."""
    out: list[str] = []
    for ref in refs:
        found = match_member(ref, candidates, hints.get(ref, ""))
        if not found:
            raise GroupFileInvalid(
                UNKNOWN_MEMBER, f"no character of yours is the member {ref!r}", {"member": ref}
            )
        if len(found) > 1:
            raise GroupFileInvalid(
                MEMBER_AMBIGUOUS,
                f"{len(found)} characters could be the member {ref!r}: rename all but one",
                {"member": ref, "characters": found[:10]},
            )
        if found[0] in out:
            raise GroupFileInvalid(
                DUPLICATE_MEMBER, f"{ref!r} is a member already", {"member": ref}
            )
        out.append(found[0])
    return out
