"""Writes of characters: the cards players chat with."""

from __future__ import annotations

from django.db import transaction

from roleplay.models import Character, Conversation
from roleplay.services import rows
from roleplay.services.conversations import delete_conversations
from worldbook import services as worldbooks

CHARACTER_FIELDS = ("name", "description", "first_message", "example_dialogues", "model_config")


def create_character(tenant, **fields) -> Character:
    """A new character; ``model_config`` (its default model) must be the tenant's own."""
    return _write(Character(tenant=tenant), fields, update=False)


def update_character(character: Character, **fields) -> Character:
    return _write(character, fields, update=True)


def _write(character: Character, fields: dict, update: bool) -> Character:
    return rows.write(
        character, fields, allowed=CHARACTER_FIELDS, related=("model_config",), update=update
    )


@transaction.atomic
def delete_character(character: Character) -> int:
    """Delete the character, its conversations (with everything kept by their id) and its
    worldbook bindings, which name it by id without a foreign key; returns how many
    conversations went."""
    gone = delete_conversations(
        character.tenant, Conversation.objects.filter(tenant=character.tenant, character=character)
    )
    worldbooks.put_bindings(character.tenant, str(character.id), [])
    character.delete()
    return gone
