"""Writes of tenancy and auth: tenants, memberships, API tokens, console users' players.

Failures are ``console.failures`` errors with stable codes, so a command, a console page and
the API report them alike.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from console.failures import Conflict, Invalid
from console.models import ApiToken, Membership, Player, Role, Scope, Tenant, hash_token


def create_tenant(name: str) -> Tenant:
    """A new tenant; names are unique (``duplicate`` if taken)."""
    try:
        with transaction.atomic():
            return Tenant.objects.create(name=name)
    except IntegrityError as exc:
        raise Conflict("duplicate", f"tenant {name!r} already exists", {"field": "name"}) from exc


def create_api_token(tenant: Tenant, name: str, scopes: list[str]) -> tuple[ApiToken, str]:
    """A new token; the raw value is returned once and only its hash is stored."""
    valid = {s.value for s in Scope}
    bad = [s for s in scopes if s not in valid]
    if bad or not scopes:
        raise Invalid(
            "validation_error",
            f"scopes must be a non-empty subset of {sorted(valid)}",
            {"errors": [{"loc": "scopes", "msg": f"choose from {sorted(valid)}"}]},
        )
    raw, prefix = ApiToken.generate()
    token = ApiToken.objects.create(
        tenant=tenant,
        name=name,
        prefix=prefix,
        token_hash=hash_token(raw),
        scopes=sorted(set(scopes)),
    )
    return token, raw


def revoke_api_token(token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


@transaction.atomic
def ensure_console_user(
    tenant: Tenant, username: str, password: str | None, role: str = Role.OPERATOR
):
    """Create (or keep) a console user of the tenant; the password is set only on creation."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save()
    Membership.objects.update_or_create(user=user, defaults={"tenant": tenant, "role": role})
    return user, created


def console_player_external_id(user) -> str:
    """The external id of the player that stands for a console user in chat."""
    return f"console:{user.get_username()}"


def ensure_console_player(tenant: Tenant, user, display_name: str = "") -> Player:
    """The player linked to a console user, created on first use (named ``display_name``,
    else after the user).

    A player with the same external id that was created without a user (say, through the
    API) is adopted by linking it; one linked to someone else is left as it is.
    """
    player, created = Player.objects.get_or_create(
        tenant=tenant,
        external_id=console_player_external_id(user),
        defaults={
            "display_name": display_name or user.get_full_name() or user.get_username(),
            "user": user,
        },
    )
    if not created and player.user_id is None:
        Player.objects.filter(pk=player.pk, user__isnull=True).update(user=user)
        player.user = user
    return player
