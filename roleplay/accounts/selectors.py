"""Reads of player accounts."""

from __future__ import annotations

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from console.models import Tenant
from roleplay.accounts.models import DeviceSession, Invite, PlayerAccount, PlayerApp


def app_tenant() -> Tenant | None:
    """The tenant ``/app/`` serves: ``PLAYER_APP_TENANT`` (a tenant's name) when set, else
    the oldest tenant (the demo's on a fresh ``make run``)."""
    name = settings.PLAYER_APP_TENANT
    tenants = Tenant.objects.order_by("created_at", "name")
    return tenants.filter(name=name).first() if name else tenants.first()


def app_settings(tenant) -> PlayerApp:
    """The tenant's player-app settings (the defaults, unsaved, until an admin sets them)."""
    return PlayerApp.objects.filter(tenant=tenant).first() or PlayerApp(tenant=tenant)


def account_of(user) -> PlayerAccount | None:
    """The player account of a signed-in user, or None (anonymous, or a console user)."""
    if user is None or not user.is_authenticated:
        return None
    return PlayerAccount.objects.select_related("tenant", "player").filter(user_id=user.pk).first()


def account_by_email(tenant, email: str) -> PlayerAccount | None:
    return (
        PlayerAccount.objects.select_related("user")
        .filter(tenant=tenant, email=normalize_email(email))
        .first()
    )


def normalize_email(email: str) -> str:
    return (email or "").strip().lower()


def accounts(tenant) -> QuerySet:
    return PlayerAccount.objects.filter(tenant=tenant).select_related("player").order_by("email")


def invites(tenant) -> QuerySet:
    return Invite.objects.filter(tenant=tenant).order_by("-created_at")


def invite_usable(invite: Invite, now=None) -> bool:
    now = now or timezone.now()
    return invite.revoked_at is None and invite.uses < invite.max_uses and invite.expires_at > now


def devices(account) -> QuerySet:
    return DeviceSession.objects.filter(account=account).order_by("-last_seen_at")
