"""Reads of players and their personas: who a player is in a conversation (one raw SQL
read on the turn's path), their personas and sessions, the console's list."""

from __future__ import annotations

from dataclasses import dataclass

from console.lists import matching, row_count
from console.models import Player
from console.rows import prepared
from console.scoping import scoped
from roleplay.characters.selectors import without_avatars
from roleplay.models import (
    Conversation,
    Persona,
)


@dataclass(frozen=True)
class ActivePersona:
    """Who the player is in a conversation: ``{{user}}`` is ``name``, ``{{persona}}`` is
    ``description``. ``source`` says where it came from: the ``conversation``'s choice,
    the player's ``default``, or the ``player`` themselves (no persona: their name)."""

    name: str
    description: str
    source: str
    persona_id: str | None = None


def default_persona_sql(player: str) -> str:
    """The player's default persona (id, name, description), one row at most, for the
    player id ``player`` (a placeholder or a column of the statement it joins). Every turn
    without a chosen persona reads it, with its conversation (``turns.reads``); pinned to
    the ORM read (``Persona.objects.filter(player_id=..., is_default=True)``) by
    tests/fastpaths/test_turn_reads.py."""
    return f"""
        SELECT id, name, description FROM {Persona._meta.db_table}
        WHERE player_id = {player} AND is_default
    """


def persona_for(conversation: Conversation) -> ActivePersona:
    """The conversation's persona, else its player's default one, else a plain persona
    named after the player (display name, else external id)."""
    if conversation.persona is not None:
        return persona_from(conversation, None)
    with prepared(default_persona_sql("%s"), [conversation.player_id]) as cursor:
        return persona_from(conversation, cursor.fetchone())  # one at most


def persona_from(conversation: Conversation, default: tuple | None) -> ActivePersona:
    """:func:`persona_for` given the player's default persona already read
    (:func:`default_persona_sql`'s row, or None)."""
    chosen = conversation.persona
    if chosen is not None:
        return ActivePersona(chosen.name, chosen.description, "conversation", str(chosen.pk))
    if default is not None:
        return ActivePersona(default[1], default[2], "default", str(default[0]))
    player = conversation.player
    return ActivePersona(player.display_name or player.external_id, "", "player")


def player_personas(tenant, player):
    """The player's personas, the default first, without avatar bytes."""
    return without_avatars(scoped(Persona, tenant).filter(player=player)).order_by(
        "-is_default", "name", "created_at"
    )


def player_sessions(tenant, player) -> list[str]:
    """The message store's session ids of the player's conversations."""
    rows = Conversation.objects.filter(tenant=tenant, player=player).values_list("pk", flat=True)
    return [str(pk) for pk in rows]


def speaker_names(tenant, player, character_id: str | None = None) -> list[str]:
    """The names the player's talk goes by: the player's display name and personas', and
    the characters' of their conversations (only ``character_id``'s when given). Recall
    takes them out of a question (``memory.engine.speakers``)."""
    conversations = Conversation.objects.filter(tenant=tenant, player=player)
    if character_id:
        conversations = conversations.filter(character_id=character_id)
    personas = Persona.objects.filter(tenant=tenant, player=player).values_list("name", flat=True)
    characters = conversations.values_list("character__name", flat=True).distinct()
    return [n for n in dict.fromkeys([player.display_name, *personas, *characters]) if n]


PLAYER_SEARCH = ("external_id", "display_name")


def player_list(tenant, query: str | None = None):
    """Players with how many personas and conversations each has, newest first."""
    return (
        matching(scoped(Player, tenant), query, PLAYER_SEARCH)
        .annotate(
            persona_count=row_count(Persona, tenant, "player"),
            conversation_count=row_count(Conversation, tenant, "player"),
        )
        .order_by("-created_at", "-pk")
    )
