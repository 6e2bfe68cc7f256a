"""Writes of characters: the cards players chat with.

Text fields carry their limits on the model (checked here too: Django leaves a TextField's
``max_length`` to forms); the list and JSON fields a card brings
(``alternate_greetings``, ``tags``, ``extensions``) are checked here against
:mod:`roleplay.characters.cards.limits` for every door, along with the storability of every string
in
them (PostgreSQL's jsonb refuses NUL). Avatars are written by :mod:`.avatars`; a card file
becomes a character through :mod:`.card_import`.
"""

from __future__ import annotations

from django.db import models, transaction

from roleplay.characters.cards import limits
from roleplay.conversations.services.conversations import delete_conversations
from roleplay.models import Character, Conversation
from roleplay.prompting.notes import normalise_note, note_problems
from roleplay.services import rows
from worldbook import errors as worldbook_errors
from worldbook import services as worldbooks

CHARACTER_FIELDS = (
    "name",
    "description",
    "personality",
    "scenario",
    "first_message",
    "alternate_greetings",
    "example_dialogues",
    "system_prompt",
    "post_history_instructions",
    "creator_notes",
    "tags",
    "creator",
    "character_version",
    "extensions",
    "author_note",
    "model_config",
    "default_scenario",
    "visibility",
    "content_rating",
)
# JSON fields and the rule each obeys.
JSON_RULES = {
    "alternate_greetings": limits.greetings_problems,
    "tags": limits.tags_problems,
    "extensions": limits.extensions_problems,
    "author_note": note_problems,
}


def create_character(tenant, **fields) -> Character:
    """A new character; ``model_config`` (its default model) must be the tenant's own."""
    return _write(Character(tenant=tenant), fields, update=False)


def update_character(character: Character, **fields) -> Character:
    return _write(character, fields, update=True)


def _write(character: Character, fields: dict, update: bool) -> Character:
    for name in ("alternate_greetings", "tags"):
        if name in fields and fields[name] is None:
            fields[name] = []
    if "extensions" in fields and fields["extensions"] is None:
        fields["extensions"] = {}
    normalise_note(fields)
    return rows.write(
        character,
        fields,
        allowed=CHARACTER_FIELDS,
        related=("model_config", "default_scenario"),
        update=update,
        rules=json_problems,
    )


def text_problems(instance: models.Model) -> dict[str, list[str]]:
    """Field -> problem for text longer than its ``max_length``: Django only puts a
    TextField's ``max_length`` on form widgets, so without this a door with no form (a
    card import, a command) could store a description of any length."""
    problems: dict[str, list[str]] = {}
    for field in instance._meta.concrete_fields:
        value = getattr(instance, field.attname)
        if isinstance(field, models.TextField) and field.max_length and isinstance(value, str):
            if len(value) > field.max_length:
                problems[field.name] = [
                    f"at most {field.max_length} characters (it has {len(value)})"
                ]
    return problems


def json_problems(character: Character) -> dict[str, list[str]]:
    """Field -> problems of the text and JSON fields the row would hold."""
    problems = text_problems(character)
    for name, rule in JSON_RULES.items():
        value = getattr(character, name)
        found = rule(value)
        if not found:
            try:
                worldbooks.check_storable(value, name)
            except worldbook_errors.Invalid as exc:
                found = [exc.message]
        if found:
            problems[name] = found
    return problems


@transaction.atomic
def delete_character(character: Character) -> int:
    """Delete the character, its conversations (with everything kept by their id) and its
    worldbook bindings, which name it by id without a foreign key; returns how many
    conversations went. Books bound to it stay: they are worldbooks of their own."""
    gone = delete_conversations(
        character.tenant, Conversation.objects.filter(tenant=character.tenant, character=character)
    )
    worldbooks.put_bindings(character.tenant, str(character.id), [])
    character.delete()
    return gone
