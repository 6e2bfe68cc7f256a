"""Tenancy, authentication and audit data: tenants, console memberships, players, API tokens,
audit events."""

from __future__ import annotations

import hashlib
import secrets
import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from console.scoping import TenantQuerySet, TenantScopedModel


class Tenant(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    OPERATOR = "operator", "Operator"
    VIEWER = "viewer", "Viewer"


class Membership(models.Model):
    """A console user's tenant and role; one tenant per console user keeps scoping simple."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership"
    )
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.OPERATOR)

    def can_edit(self) -> bool:
        return self.role in (Role.ADMIN, Role.OPERATOR)

    def is_admin(self) -> bool:
        return self.role == Role.ADMIN


class Player(TenantScopedModel):
    """An end user of chat, identified by the integrator's own user id. Who they are in a
    conversation is one of their personas (``roleplay.Persona``)."""

    external_id = models.CharField(max_length=200)
    display_name = models.CharField(max_length=200, blank=True, default="")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "external_id"], name="player_unique_ext")
        ]

    def __str__(self) -> str:
        return self.display_name or self.external_id


class Scope(models.TextChoices):
    ADMIN = "admin", "admin"
    CONTENT = "content", "content"
    PLAY = "play", "play"


TOKEN_PREFIX = "rpk"


def hash_token(raw: str) -> str:
    """Tokens carry 256 bits of randomness, so a plain SHA-256 is a safe at-rest hash."""
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(TenantScopedModel):
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    scopes = ArrayField(models.CharField(max_length=16, choices=Scope.choices), default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    @staticmethod
    def generate() -> tuple[str, str]:
        """A new (raw token, prefix); the raw token is shown once and never stored."""
        prefix = secrets.token_hex(4)
        return f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}", prefix

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class IdempotencyRecord(TenantScopedModel):
    """Replays the first response of a create/import call made with the same key."""

    scope = models.CharField(max_length=100)
    key = models.CharField(max_length=200)
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "scope", "key"], name="idempotency_unique")
        ]


class AuditAction(models.TextChoices):
    LOGIN_SUCCEEDED = "login.succeeded", "login succeeded"
    LOGIN_FAILED = "login.failed", "login failed"
    LOGIN_LOCKED_OUT = "login.locked_out", "login locked out"
    LOGIN_UNLOCKED = "login.unlocked", "login unlocked by an admin"
    LOGOUT = "logout", "logout"
    STORY_QUARANTINE = "story.quarantine", "story quarantine decided"
    COMPACT_CHECKPOINT = "compact.checkpoint", "compact checkpoint changed by an operator"
    DIO_VERSION = "dio.version", "DIO prompt reverted or switched off by an operator"
    PLAYER_APP_CHANGED = "player.app", "player app settings changed"
    PLAYER_SIGNED_UP = "player.signed_up", "player account created"
    PLAYER_VERIFIED = "player.verified", "player e-mail verified"
    PLAYER_PROVIDER = "player.provider", "player signed in through the sign-on provider"
    PLAYER_INVITE = "player.invite", "player invite created or revoked"
    PLAYER_DEVICE_REVOKED = "player.device_revoked", "player device signed out"
    PLAYER_EXPORTED = "player.exported", "player data exported"
    PLAYER_DELETED = "player.deleted", "player account deleted"
    MODERATION_POLICY = "moderation.policy", "moderation policy changed"
    MODERATION_DISMISSED = "moderation.dismissed", "moderation case dismissed"
    MODERATION_HIDDEN = "moderation.hidden", "message hidden by an operator"
    MODERATION_SANCTION = "moderation.sanction", "player suspended or banned"
    MODERATION_LIFTED = "moderation.lifted", "player suspension or ban lifted"
    MODERATION_UNLISTED = "moderation.unlisted", "character unlisted by an operator"
    PLAN_CREATED = "plan.create", "plan created"
    PLAN_CHANGED = "plan.update", "plan changed"
    PLAN_DELETED = "plan.delete", "plan deleted"
    PLAN_ASSIGNED = "plan.assign", "plan given to a player"


class AuditEvent(models.Model):
    """One security-relevant event: who, what, when, from where. Written only by
    ``console.audit``; never holds a password, token or secret.

    The tenant is the acting account's; an event with no known account (a login attempt on
    a name that does not exist) has none and is visible only to staff in Django's admin.
    """

    tenant = models.ForeignKey(
        "console.Tenant", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    action = models.CharField(max_length=32, choices=AuditAction.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    username = models.CharField(max_length=150, blank=True, default="")
    client_address = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=255, blank=True, default="")
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TenantQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["tenant", "-created_at"], name="audit_tenant_recent")]

    def __str__(self) -> str:
        return f"{self.action} {self.username or '-'} {self.created_at:%Y-%m-%d %H:%M:%S}"
