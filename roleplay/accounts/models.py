"""The tables of player accounts (imported by ``roleplay.models``).

A player account is a Django user (password hashing, validators, reset tokens and the
login throttle come with it) linked one-to-one to a ``console.Player``. It has no console
membership, so the console refuses it; a console operator is a player only if also given an
account. The Django username is an opaque ``player-<hex>``: people sign in with their
e-mail, which is unique per tenant, not across the site.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from console.scoping import TenantScopedModel


class SignupPolicy(models.TextChoices):
    CLOSED = "closed", "closed: operators create players"
    INVITE = "invite", "invite: by invite link"
    OPEN = "open", "open: anyone, with e-mail verification"


class PlayerApp(models.Model):
    """A tenant's settings of the player app, changed by an admin in the console."""

    tenant = models.OneToOneField("console.Tenant", on_delete=models.CASCADE, primary_key=True)
    signup_policy = models.CharField(
        max_length=10, choices=SignupPolicy.choices, default=SignupPolicy.CLOSED
    )
    # Players may create and import characters of their own (private unless listed).
    player_characters = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)


class PlayerAccount(TenantScopedModel):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    player = models.OneToOneField(
        "console.Player", on_delete=models.CASCADE, related_name="account"
    )
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="player_account"
    )
    email = models.EmailField(max_length=254)
    email_verified_at = models.DateTimeField(null=True, blank=True)
    age_confirmed_at = models.DateTimeField(null=True, blank=True)
    # How the account came: "operator", "invite" or "open" (the plan of a route, the audit).
    route = models.CharField(max_length=10, default="operator")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "email"], name="player_account_email"),
        ]

    def __str__(self) -> str:
        return self.email


class Invite(TenantScopedModel):
    """A sign-up link usable ``max_uses`` times until ``expires_at``; only its hash is kept."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    token_hash = models.CharField(max_length=64, unique=True)
    note = models.CharField(max_length=200, blank=True, default="")
    max_uses = models.PositiveIntegerField(default=1)
    uses = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)


class DeviceSession(TenantScopedModel):
    """One signed-in device of an account: its Django session, listed and revocable."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    account = models.ForeignKey(PlayerAccount, on_delete=models.CASCADE, related_name="devices")
    session_key = models.CharField(max_length=40, unique=True)
    user_agent = models.CharField(max_length=255, blank=True, default="")
    client_address = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now_add=True)
