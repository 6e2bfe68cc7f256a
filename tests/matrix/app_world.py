"""Players of the player app (``/app/``) for the matrices: each with objects of every kind.

A player's objects carry the player's label in their names and texts, so a page that shows
another player's object is caught by a plain substring test. A route parameter of an app
page names one of the signed-in player's objects: ``MAKERS`` says how to make one for a
player (a new kind of object on an app page adds its maker here, or the coverage test fails).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.test import Client

PASSWORD = "pw-matrix-123456"

# Pages anyone may open without signing in (sign-in, sign-up, links from mails).
APP_PUBLIC = {
    "app_login",
    "app_logout",
    "app_signup",
    "app_signup_invited",
    "app_verify_pending",
    "app_verify",
    "app_reset",
    "app_reset_sent",
    "app_reset_confirm",
    "app_reset_complete",
    "openid_connect_login",  # sign-on through the provider (a 404 while it is off)
    "openid_connect_callback",
}

# Parameters of public pages (tokens from mails and invites): any well-formed value.
PUBLIC_VALUES = {"token": "x" * 24, "uidb64": "MQ", "provider_id": "sso"}


def _device(world: PlayerWorld) -> str:
    from roleplay.accounts.models import DeviceSession

    return str(DeviceSession.objects.filter(account=world.account).latest("created_at").pk)


def _character(world: PlayerWorld) -> str:
    """A character of the player's own (private: nobody else sees it)."""
    from roleplay.library.services import create_own_character

    account = world.account
    made = create_own_character(
        account.tenant,
        account.player,
        name=f"{world.label} hero",
        first_message=f"Hello from {world.label}.",
        tags=[f"{world.label}-tag"],
        creator_notes=f"notes of {world.label}",
    )
    return str(made.pk)


def _conversation(world: PlayerWorld) -> str:
    from roleplay.conversations.services.conversations import start_conversation
    from roleplay.models import Character

    account = world.account
    character = Character.objects.get(pk=world.value("character_id"))
    started = start_conversation(
        account.tenant, character=character, player=account.player, title=f"{world.label} chat"
    )
    return str(started.pk)


def _persona(world: PlayerWorld) -> str:
    from roleplay.players.services.personas import create_persona

    account = world.account
    made = create_persona(account.tenant, player=account.player, name=f"{world.label} persona")
    return str(made.pk)


def _entry(world: PlayerWorld) -> str:
    from memory.entries.services import add_entry

    account = world.account
    made = add_entry(
        account.tenant,
        account.player,
        kind="fact",
        scope="shared",
        content=f"{world.label} likes tea",
    )
    return str(made.pk)


# Parameter name → maker of the player's object of that kind (its id).
MAKERS: dict[str, Callable[[PlayerWorld], str]] = {
    "device_id": _device,
    "character_id": _character,
    "conversation_id": _conversation,
    "persona_id": _persona,
    "entry_id": _entry,
}


@dataclass
class PlayerWorld:
    label: str
    account: object
    client: Client
    made: dict[str, str] = field(default_factory=dict)

    def value(self, name: str) -> str:
        if name not in self.made:
            self.made[name] = MAKERS[name](self)
        return self.made[name]


def build_player(tenant, label: str) -> PlayerWorld:
    """A verified player account named after ``label``, signed in on its own client."""
    from roleplay.accounts import services

    account = services.create_account(
        tenant, email=f"{label}@example.com", password=PASSWORD, display_name=f"{label} player"
    )
    client = Client(REMOTE_ADDR="203.0.113.7", HTTP_USER_AGENT=f"{label}-browser")
    response = client.post("/app/login/", {"email": account.email, "password": PASSWORD})
    assert response.status_code == 302, response.content[:300]
    return PlayerWorld(label, account, client)


def app_source(route, name: str):
    from tests.matrix.tables import Uncovered

    if route.key in APP_PUBLIC and name in PUBLIC_VALUES:
        return lambda world, client: PUBLIC_VALUES[name]
    if name in MAKERS:
        return lambda world, client: world.value(name)
    raise Uncovered(
        f"route {route.key!r} ({route.template}): parameter {name!r} names an unknown object "
        "of a player: add its maker to MAKERS in tests/matrix/app_world.py"
    )
