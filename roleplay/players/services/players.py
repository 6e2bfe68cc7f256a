"""Writes of players, the end users of chat.

The table lives in ``console`` (console users are linked to a player there, see
``console.services.ensure_console_player``); the runtime owns a player's life as a chat
participant, and deleting one takes their conversations with it.
"""

from __future__ import annotations

from django.db import transaction

from console.models import Player
from roleplay.conversations.services.conversations import delete_conversations
from roleplay.models import Conversation
from roleplay.services import rows

PLAYER_FIELDS = ("external_id", "display_name")


def create_player(tenant, **fields) -> Player:
    """A new player; ``external_id`` (the integrator's user id) is unique in the tenant."""
    return rows.write(Player(tenant=tenant), fields, allowed=PLAYER_FIELDS, update=False)


def update_player(player: Player, **fields) -> Player:
    return rows.write(player, fields, allowed=PLAYER_FIELDS, update=True)


@transaction.atomic
def delete_player(player: Player) -> int:
    """Delete the player and their conversations; returns how many conversations went."""
    gone = delete_conversations(
        player.tenant, Conversation.objects.filter(tenant=player.tenant, player=player)
    )
    player.delete()
    return gone
