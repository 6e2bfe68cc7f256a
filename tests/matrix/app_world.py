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
}

# Parameters of public pages (tokens from mails and invites): any well-formed value.
PUBLIC_VALUES = {"token": "x" * 24, "uidb64": "MQ"}


def _device(world: PlayerWorld) -> str:
    from roleplay.accounts.models import DeviceSession

    return str(DeviceSession.objects.filter(account=world.account).latest("created_at").pk)


# Parameter name → maker of the player's object of that kind (its id).
MAKERS: dict[str, Callable[[PlayerWorld], str]] = {"device_id": _device}


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
