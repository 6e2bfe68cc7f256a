"""Writes of personas: who a player is in a conversation (``{{user}}`` is the persona's
name, ``{{persona}}`` its description).

A player has at most one default persona; the database holds that with a partial unique
index, and every switch happens here under a lock on the player's row, so two concurrent
switches wait for each other instead of tripping the index. A player's first persona
becomes the default. Deleting the default leaves none: a conversation without a persona of
its own then speaks as a plain persona named after the player
(``roleplay.players.selectors.persona_for``). A persona never moves to another player.
"""

from __future__ import annotations

from django.db import transaction

from console.models import Player
from roleplay.characters.services.characters import text_problems
from roleplay.errors import FieldErrors
from roleplay.models import Persona
from roleplay.services import rows
from worldbook import services as worldbooks

PERSONA_FIELDS = ("player", "name", "description")


@transaction.atomic
def create_persona(
    tenant, *, player: Player, name: str, description: str = "", is_default: bool | None = None
) -> Persona:
    """A new persona of ``player`` (the tenant's own); the default if ``is_default``, or if
    the player has none yet and ``is_default`` is not False."""
    persona = rows.write(
        Persona(tenant=tenant),
        {"player": player, "name": name, "description": description},
        allowed=PERSONA_FIELDS,
        related=("player",),
        update=False,
        rules=text_problems,
    )
    first = not Persona.objects.filter(player=player, is_default=True).exists()
    if is_default or (is_default is None and first):
        make_default_persona(persona)
    return persona


@transaction.atomic
def update_persona(persona: Persona, *, is_default: bool | None = None, **fields) -> Persona:
    """Change ``name``/``description``; ``is_default`` True makes it the default, False
    stops it being one, None leaves that as it is."""
    player = fields.pop("player", None)
    if player is not None and player.pk != persona.player_id:
        raise FieldErrors({"player": ["a persona cannot move to another player"]})
    if fields:
        rows.write(persona, fields, allowed=PERSONA_FIELDS, update=True, rules=text_problems)
    if is_default:
        make_default_persona(persona)
    elif is_default is False and persona.is_default:
        Persona.objects.filter(pk=persona.pk).update(is_default=False)
        persona.is_default = False
    return persona


def make_default_persona(persona: Persona) -> Persona:
    """Make ``persona`` its player's default and no other one."""
    return rows.make_the_default(persona, "player", Player)


def delete_persona(persona: Persona) -> None:
    """Conversations that chose it fall back to the player's default (the foreign key is set
    to null); the worldbooks bound to it are unbound (the books stay)."""
    worldbooks.forget_scope(persona.tenant, "persona", [persona.pk])
    persona.delete()
