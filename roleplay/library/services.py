"""Writes of the player app beyond the services it calls: a chat started from the library,
a player's own characters, and when a player last read a chat.

Each write reuses the console's service for the same row (conversations, characters, card
import); what is added here is the player's rule: a character made or imported in the app
belongs to the player (``owner_player``), stays private, and only they change it.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from roleplay.characters.selectors import greeting_choices
from roleplay.characters.services import characters
from roleplay.characters.services.card_import import import_card
from roleplay.conversations.services.conversations import start_conversation
from roleplay.errors import FieldErrors
from roleplay.models import Character, Conversation, Visibility

# What a player sets on their own character (the rest stays the operators').
PLAYER_CHARACTER_FIELDS = (
    "name",
    "description",
    "personality",
    "scenario",
    "first_message",
    "alternate_greetings",
    "example_dialogues",
    "creator_notes",
    "tags",
    "content_rating",
)


def start_from_library(tenant, *, character, player, persona=None, opening: int | None = None):
    """A conversation of ``player`` with a character of the library; ``opening`` is one of
    the character's non-empty openings (None: the first one there is)."""
    openings = [index for index, text in greeting_choices(character) if text.strip()]
    if opening is not None and opening not in openings:
        raise FieldErrors({"opening": ["choose one of the character's openings"]})
    if opening is None:
        opening = openings[0] if openings else None
    return start_conversation(
        tenant, character=character, player=player, persona=persona, greeting_index=opening
    )


@transaction.atomic
def create_own_character(tenant, player, **fields) -> Character:
    """A character of the player's own, private to them."""
    _only_player_fields(fields)
    character = characters.create_character(tenant, **fields, visibility=Visibility.PRIVATE)
    Character.objects.filter(pk=character.pk).update(owner_player=player)
    character.owner_player = player
    return character


@transaction.atomic
def import_own_character(tenant, player, filename: str, data: bytes) -> Character:
    """A card file as a character of the player's own: always a new copy (never the
    character an operator's import of the same file made), private to them."""
    imported = import_card(tenant, filename, data, on_duplicate="copy")
    character = imported.character
    Character.objects.filter(pk=character.pk).update(
        owner_player=player, visibility=Visibility.PRIVATE
    )
    character.owner_player, character.visibility = player, Visibility.PRIVATE
    return character


def update_own_character(character: Character, **fields) -> Character:
    _only_player_fields(fields)
    return characters.update_character(character, **fields)


def delete_own_character(character: Character) -> int:
    """Delete it with its conversations (the console's rule: ``delete_character``)."""
    return characters.delete_character(character)


def _only_player_fields(fields: dict) -> None:
    unknown = sorted(set(fields) - set(PLAYER_CHARACTER_FIELDS))
    if unknown:
        raise FieldErrors({name: ["not a field a player sets"] for name in unknown})


def mark_read(conversation: Conversation) -> None:
    """The player read the conversation now ("My chats" shows it read). It changes nothing
    else: not the conversation's ``updated_at``, which says when its settings changed."""
    now = timezone.now()
    Conversation.objects.filter(pk=conversation.pk).update(player_read_at=now)
    conversation.player_read_at = now
