"""Deleting a player account and everything that is the player's, in one transaction.

What goes: the conversations (messages, turns, documents, pictures: the runtime's
``delete_player``), the memory about the player (entries, evidence, handoffs: memory's
``forget``), the characters the player made, the personas, the devices and sessions, the
sign-in attempts recorded under the e-mail, the account and its user. What stays: an audit
event naming the account's id (not its e-mail), as every deletion leaves.
"""

from __future__ import annotations

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.db import transaction

from console import audit
from console.models import AuditAction
from memory.forget import forget
from roleplay.accounts import services
from roleplay.characters.services.characters import delete_character
from roleplay.models import Character, Conversation
from roleplay.players.services.players import delete_player


@transaction.atomic
def delete_account(account, *, request=None) -> dict:
    """Delete ``account`` and all that is its player's; returns what went, by kind. A reply
    still being generated in one of the conversations refuses the whole deletion
    (``TurnInProgress``): nothing is deleted."""
    tenant, player, user = account.tenant, account.player, account.user
    account_id, email = str(account.id), account.email
    own = Character.objects.filter(tenant=tenant, owner_player=player)
    characters = 0
    for character in own:
        delete_character(character)
        characters += 1
    sessions = [
        str(pk)
        for pk in Conversation.objects.filter(tenant=tenant, player=player).values_list(
            "pk", flat=True
        )
    ]
    forget(tenant, scope="player", player=player, player_sessions=sessions)
    services.end_all_sessions(account)
    conversations = delete_player(player)  # personas and memory entries go with the row
    for model in (AccessAttempt, AccessFailureLog, AccessLog):
        model.objects.filter(username=email).delete()
    user.delete()  # the account and its devices with it
    gone = {"conversations": conversations, "characters": characters}
    audit.record(
        AuditAction.PLAYER_DELETED,
        request=request,
        tenant=tenant,
        username="(deleted player)",
        details={"account": account_id, **gone},
    )
    return gone
