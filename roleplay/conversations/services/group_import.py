"""A SillyTavern group (``groups/<id>.json``) and one of its chats (``.jsonl``) become one
group conversation (``roleplay.conversations.chats.group_file``, docs/groups.md).

The members are the tenant's characters the group names by avatar file (``Mira.png``) or
by name (``chats.group_file.match_members``): characters of the operators, or the
importing player's own; an unknown, ambiguous or repeated member is refused (422) before
anything is written. The first member is the conversation's character; the others join
through the group's service (``roleplay.groups.services``) in the group's order, the
disabled ones muted, each as talkative as its card says (SillyTavern keeps
``extensions.talkativeness`` on the card). The group's settings become the
conversation's: ``group_mode``, ``join_cards``, ``allow_self_responses``, ``auto_delay_ms``.

Each reply of the chat keeps its speaker as a group turn's reply does
(``metadata.speaker = {id, name}``): the member its ``original_avatar`` names, else the
member its ``name`` is; a reply of a character no longer in the group keeps that
character when the tenant has it, else only the name the file shows. The rest is a chat
import (``services.chat_import``): one transaction, the opening taken when the first
reply is the first member's greeting, the messages indexed once it commits.
"""

from __future__ import annotations

import math

from django.db import transaction
from django.db.models import Q

from roleplay.characters.selectors import greeting_choices
from roleplay.conversations.chats.errors import UNKNOWN_MEMBER, GroupFileInvalid
from roleplay.conversations.chats.group_file import (
    GroupFile,
    avatar_stem,
    match_member,
    match_members,
    read_group,
)
from roleplay.conversations.chats.notes import note_from_metadata
from roleplay.conversations.chats.read import ChatFile, read_chat
from roleplay.conversations.services.chat_import import (
    ImportedChat,
    opening_of,
    title_of,
    write_messages,
)
from roleplay.conversations.services.conversations import start_conversation, update_conversation
from roleplay.groups import services as groups
from roleplay.groups.engine import DEFAULT_TALKATIVENESS
from roleplay.groups.errors import GroupRefused
from roleplay.models import Character
from roleplay.turns.records import index_on_commit


def import_group(
    tenant,
    group_data: bytes,
    chat_data: bytes | None = None,
    *,
    player,
    persona=None,
    scenario=None,
    title: str = "",
    file_name: str = "",
) -> ImportedChat:
    """``chat_data`` None: the group alone, opening with its first member's greeting.
    ``title`` empty: the group's name, else the chat file's name."""
    group = read_group(group_data)
    if len(group.members) > groups.MAX_MEMBERS:
        raise GroupRefused(
            "group_full", f"a group has at most {groups.MAX_MEMBERS} members",
            {"members": len(group.members)},
        )  # fmt: skip
    chat = read_chat(chat_data) if chat_data is not None else None
    candidates = _candidates(tenant, player)
    ids = match_members(group.members, candidates, _hints(chat))
    characters = _fetched(tenant, group, ids)
    with transaction.atomic():
        note = note_from_metadata(chat.metadata) if chat else None
        conversation = start_conversation(
            tenant,
            character=characters[0],
            player=player,
            persona=persona,
            scenario=scenario,
            title=title or group.name or title_of(file_name),
            author_note=note,
            group_mode=group.group_mode,
            join_cards=group.join_cards,
            allow_self_responses=group.allow_self_responses,
            auto_delay_ms=group.auto_delay_ms,
        )
        _join(conversation, group, characters)
        report = _report(group, characters)
        if chat is None:
            return ImportedChat(_open(conversation), report)
        speakers = _speakers(chat, group, characters, candidates)
        messages = list(chat.messages)
        opening = None
        if (speakers[0] or {}).get("id") == str(characters[0].pk):
            opening = opening_of(chat, conversation, characters[0].name)
        conversation = update_conversation(conversation, greeting_index=opening)
        if opening is not None:
            messages, speakers = messages[1:], speakers[1:]
        stored = write_messages(tenant, conversation, messages, speakers)
        index_on_commit(conversation.pk, stored)
    report.update(chat.report())
    report["stored_messages"] = len(stored)
    report["opening"] = "greeting" if opening is not None else "stored"
    report["author_note"] = note is not None
    report["unmatched_speakers"] = sorted(
        {s["name"] for s in speakers if s and "id" not in s}
    )  # fmt: skip
    if opening is not None:
        report["greeting_index"] = opening
    return ImportedChat(conversation, report)


def _fetched(tenant, group: GroupFile, ids: list[str]) -> list[Character]:
    """The members' characters in the group's order (one deleted meanwhile is unknown)."""
    rows = Character.objects.filter(tenant=tenant, pk__in=ids).defer("avatar")
    found = {str(c.pk): c for c in rows}
    for ref, pk in zip(group.members, ids, strict=True):
        if pk not in found:
            raise GroupFileInvalid(UNKNOWN_MEMBER, f"no character is {ref!r}", {"member": ref})
    return [found[pk] for pk in ids]


def _open(conversation):
    """A group without its chat opens as a one-click chat does: the first greeting."""
    openings = [i for i, text in greeting_choices(conversation.character) if text.strip()]
    return update_conversation(conversation, greeting_index=openings[0] if openings else None)


def _candidates(tenant, player) -> list[tuple[str, str]]:
    """(id, name) of the characters a member may be: the operators' and the player's own."""
    rows = Character.objects.filter(tenant=tenant).filter(
        Q(owner_player__isnull=True) | Q(owner_player=player)
    )
    return [(str(pk), name) for pk, name in rows.values_list("pk", "name")]


def _hints(chat: ChatFile | None) -> dict[str, str]:
    """Avatar file -> the name the chat shows with it (SillyTavern's own avatar names,
    ``default_Seraphina.png``, need not be the character's name)."""
    if chat is None:
        return {}
    return {m.avatar: m.name for m in chat.messages if m.avatar and m.name}


def _join(conversation, group: GroupFile, characters: list[Character]) -> None:
    for ref, character in zip(group.members, characters, strict=True):
        muted, talk = ref in group.muted, _talkativeness(character)
        if character is characters[0]:
            if muted or talk != DEFAULT_TALKATIVENESS:
                groups.update_member(conversation, character.pk, muted=muted, talkativeness=talk)
            continue
        groups.add_member(conversation, character, muted=muted, talkativeness=talk)


def _talkativeness(character: Character) -> float:
    """The card's ``extensions.talkativeness`` (SillyTavern writes it as text), else 0.5."""
    value = (character.extensions or {}).get("talkativeness")
    try:
        number = float(value)
    except (TypeError, ValueError):
        return DEFAULT_TALKATIVENESS
    return min(max(number, 0.0), 1.0) if math.isfinite(number) else DEFAULT_TALKATIVENESS


def _speakers(chat: ChatFile, group: GroupFile, characters, candidates) -> list[dict | None]:
    """Each message's ``metadata.speaker``: None for the player's lines."""
    by_avatar = dict(zip(group.members, characters, strict=True))
    by_name = {c.name.casefold(): c for c in reversed(characters)}
    names = dict(candidates)
    others: dict[tuple[str, str], dict] = {}
    out: list[dict | None] = []
    for message in chat.messages:
        if message.role != "assistant":
            out.append(None)
            continue
        member = by_avatar.get(message.avatar) or by_name.get(message.name.casefold())
        if member is None and not (message.avatar or message.name):
            member = characters[0]  # a reply that names nobody: the group's first member
        if member is not None:
            out.append({"id": str(member.pk), "name": member.name})
            continue
        key = (message.avatar, message.name)
        if key not in others:  # a character who has left the group, once per speaker
            former = match_member(message.avatar or message.name, candidates, message.name)
            others[key] = (
                {"id": former[0], "name": names[former[0]]}
                if len(former) == 1
                else {"name": message.name or avatar_stem(message.avatar)}
            )
        out.append(others[key])
    return out


def _report(group: GroupFile, characters: list[Character]) -> dict:
    return {
        "group": group.name,
        "members": [
            {"member": ref, "character": str(c.pk), "name": c.name, "muted": ref in group.muted}
            for ref, c in zip(group.members, characters, strict=True)
        ],
        "group_mode": group.group_mode,
        "join_cards": group.join_cards,
        "allow_self_responses": group.allow_self_responses,
        "auto_delay_ms": group.auto_delay_ms,
        "dropped": list(group.dropped),
    }
