"""Reads of characters: avatars (their bytes never loaded with a list), greetings, the
console's list and the starter character."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import (
    BooleanField,
    ExpressionWrapper,
    Q,
)

from console.lists import matching, row_count
from console.scoping import scoped
from roleplay.characters.cards.images import CONTENT_TYPE, default_avatar, etag
from roleplay.models import (
    Character,
    Conversation,
)


def without_avatars(qs):
    """``qs`` without the avatar bytes (a list must not load every image), each row with
    ``avatar_set``: whether it has one (see :func:`has_avatar`)."""
    flag = ExpressionWrapper(Q(avatar__isnull=False), output_field=BooleanField())
    return qs.defer("avatar").annotate(avatar_set=flag)


def has_avatar(obj) -> bool:
    """Whether a character or persona has an avatar, without loading it when the row came
    from :func:`without_avatars`."""
    flag = getattr(obj, "avatar_set", None)
    return flag if flag is not None else obj.avatar is not None


@dataclass(frozen=True)
class Avatar:
    """An avatar to serve: PNG bytes, their type and validator, and whether it is the plain
    generated image of an owner that has none."""

    data: bytes
    content_type: str
    etag: str
    generated: bool


def avatar_of(owner) -> Avatar:
    """The avatar of a character or persona, or a plain image made from its name."""
    if owner.avatar is not None:
        data = bytes(owner.avatar)
        return Avatar(data, owner.avatar_content_type or CONTENT_TYPE, etag(data), False)
    data = default_avatar(owner.name)
    return Avatar(data, CONTENT_TYPE, etag(data), True)


def greeting_choices(character: Character) -> list[tuple[int, str]]:
    """(greeting_index, text) of every opening a conversation with ``character`` may choose:
    0 the first message, n the n-th alternate greeting."""
    openings = [character.first_message, *(character.alternate_greetings or [])]
    return [(index, text) for index, text in enumerate(openings) if isinstance(text, str)]


def greeting_for(conversation: Conversation) -> str:
    """The opening line of ``conversation``: its character's first message, or the alternate
    greeting it chose; the first message again if that greeting was removed since; none
    ("") when the conversation has no opening."""
    character = conversation.character
    alternates = character.alternate_greetings or []
    index = conversation.greeting_index
    if index is None:
        return ""
    if 0 < index <= len(alternates) and isinstance(alternates[index - 1], str):
        return alternates[index - 1]
    return character.first_message


# What a search box matches, per list: the fields that tell one row from another.
CHARACTER_SEARCH = ("name", "creator", "tags", "character_version")


def character_list(tenant, query: str | None = None):
    """Characters with their default config and how many conversations use them."""
    return (
        without_avatars(matching(scoped(Character, tenant), query, CHARACTER_SEARCH))
        .select_related("model_config")
        .annotate(conversation_count=row_count(Conversation, tenant, "character"))
        .order_by("name", "created_at")
    )


def starter_character(tenant) -> Character | None:
    """The character the dashboard's getting-started list offers to chat with: the demo
    one (tagged ``demo``), else the first one made."""
    rows = without_avatars(scoped(Character, tenant)).order_by("created_at")
    return rows.filter(tags__contains=["demo"]).first() or rows.first()
