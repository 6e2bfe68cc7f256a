"""Writes of player accounts: sign-up under the tenant's policy, invites, verification,
devices. Every door (the app's pages, the console, the API, ``seed_demo``) comes here."""

from __future__ import annotations

import secrets
import uuid
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.sessions.backends.db import SessionStore
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from console import audit
from console.clients import client_address, client_user_agent
from console.failures import FieldErrors, NotFound
from console.models import AuditAction, Player, hash_token
from roleplay.accounts import mail
from roleplay.accounts.blockers import blocked_reason
from roleplay.accounts.errors import (
    EmailTaken,
    InviteInvalid,
    InviteRequired,
    LinkInvalid,
    ProviderRefused,
    SignupClosed,
)
from roleplay.accounts.models import (
    DeviceSession,
    Invite,
    PlayerAccount,
    PlayerApp,
    SignupPolicy,
)
from roleplay.accounts.selectors import app_settings, normalize_email

VERIFY_SALT = "roleplay.accounts.verify"
VERIFY_MAX_AGE = 3 * 24 * 3600
MAX_INVITE_USES = 10_000
MAX_INVITE_HOURS = 24 * 365
MAX_NAME = 200
PROVIDER_ROUTE = "oidc"  # an account made at its first sign-in through the provider
# A device's "last seen" is a hint: written at most this often per session.
SEEN_EVERY = timedelta(minutes=5)


def set_app_settings(tenant, *, by=None, request=None, **fields) -> PlayerApp:
    """Change the tenant's sign-up policy and whether players may bring characters."""
    row = app_settings(tenant)
    errors: dict[str, list[str]] = {}
    policy = fields.get("signup_policy", row.signup_policy)
    if policy not in SignupPolicy.values:
        errors["signup_policy"] = [f"one of {', '.join(SignupPolicy.values)}"]
    own = fields.get("player_characters", row.player_characters)
    if not isinstance(own, bool):
        errors["player_characters"] = ["a boolean"]
    if errors:
        raise FieldErrors(errors)
    row.signup_policy, row.player_characters = policy, own
    row.save()
    audit.record(
        AuditAction.PLAYER_APP_CHANGED,
        request=request,
        user=by,
        tenant=tenant,
        details={"signup_policy": policy, "player_characters": own},
    )
    return row


def _check_credentials(email: str, password: str, display_name: str) -> str:
    errors: dict[str, list[str]] = {}
    email = normalize_email(email)
    try:
        validate_email(email)
    except ValidationError:
        errors["email"] = ["an e-mail address"]
    if not isinstance(password, str) or not password:
        errors["password"] = ["required"]
    else:
        try:
            validate_password(password)
        except ValidationError as exc:
            errors["password"] = list(exc.messages)
    if not isinstance(display_name, str) or len(display_name) > MAX_NAME:
        errors["display_name"] = [f"at most {MAX_NAME} characters"]
    if errors:
        raise FieldErrors(errors)
    return email


@transaction.atomic
def create_account(
    tenant,
    *,
    email: str,
    password: str,
    display_name: str = "",
    route: str = "operator",
    verified: bool = True,
    player: Player | None = None,
    by=None,
    request=None,
) -> PlayerAccount:
    """A player account; an operator's is verified at once. ``player`` links an existing
    player (an integrator's ``external_id`` player keeps its chats); a player row links to
    at most one account."""
    email = _check_credentials(email, password, display_name)
    return _insert_account(
        tenant,
        email=email,
        password=password,
        display_name=display_name,
        route=route,
        verified=verified,
        player=player,
        by=by,
        request=request,
    )


def _insert_account(
    tenant,
    *,
    email: str,
    password: str | None,
    display_name: str,
    route: str,
    verified: bool,
    player: Player | None = None,
    by=None,
    request=None,
) -> PlayerAccount:
    """The rows of a checked account; no ``password``: it signs in only through the provider."""
    if PlayerAccount.objects.filter(tenant=tenant, email=email).exists():
        raise EmailTaken(message="an account with this e-mail exists")
    account_id = uuid.uuid4()
    user = get_user_model()(username=f"player-{account_id.hex}", email=email)
    if password is None:
        user.set_unusable_password()
    else:
        user.set_password(password)
    user.save()
    if player is None:
        player = Player.objects.create(
            tenant=tenant,
            external_id=f"account:{account_id}",
            display_name=display_name.strip()[:MAX_NAME] or email.split("@")[0],
        )
    elif player.tenant_id != tenant.pk:
        raise NotFound(message="no such player")
    try:
        with transaction.atomic():
            account = PlayerAccount.objects.create(
                id=account_id,
                tenant=tenant,
                player=player,
                user=user,
                email=email,
                route=route,
                email_verified_at=timezone.now() if verified else None,
            )
    except IntegrityError:  # a concurrent sign-up took the e-mail, or the player is linked
        raise EmailTaken(message="an account with this e-mail or player exists") from None
    audit.record(
        AuditAction.PLAYER_SIGNED_UP,
        request=request,
        user=by,
        tenant=tenant,
        details={"account": str(account.id), "route": route},  # no e-mail: it outlives the account
    )
    return account


def _use_invite(tenant, raw: str) -> Invite:
    """Take one use of an invite, in one conditional UPDATE (two sign-ups never share its
    last use), and the invite as it is after."""
    taken = list(Invite.objects.raw(
        f"""UPDATE {Invite._meta.db_table} SET uses = uses + 1
            WHERE tenant_id = %s AND token_hash = %s AND revoked_at IS NULL
            AND expires_at > %s AND uses < max_uses RETURNING *""",
        [tenant.pk, hash_token(raw or ""), timezone.now()],
    ))  # fmt: skip
    if not taken:
        raise InviteInvalid(message="this invite is unknown, used up, expired or revoked")
    return taken[0]


@transaction.atomic
def sign_up(
    tenant,
    *,
    email: str,
    password: str,
    display_name: str = "",
    invite: str = "",
    request=None,
) -> PlayerAccount:
    """A player signing up under the tenant's policy; the account waits for its e-mail to
    be verified (a mail with the link goes out once the sign-up commits)."""
    policy = app_settings(tenant).signup_policy
    if policy == SignupPolicy.CLOSED:
        raise SignupClosed(message="sign-up is closed: ask an operator for an account")
    route = "open"
    if policy == SignupPolicy.INVITE or invite:
        _check_credentials(email, password, display_name)  # before spending a use
        _use_invite(tenant, invite)
        route = "invite"
    account = create_account(
        tenant,
        email=email,
        password=password,
        display_name=display_name,
        route=route,
        verified=False,
        request=request,
    )
    transaction.on_commit(lambda: send_verification(account, request=request))
    return account


@transaction.atomic
def provider_account(
    tenant, *, email: str, email_verified: bool, name: str = "", request=None
) -> PlayerAccount:
    """The account an identity from the sign-on provider (docs/players.md) signs in as.

    An account with the same e-mail is that person's only when the provider says it verified
    the e-mail; an account whose own e-mail was never verified loses its password then (who
    typed it never proved the address) and is verified. Otherwise a new account, only under
    the ``open`` policy, verified when the provider says so (else the usual mail goes out).
    An account of the console (a member, staff) never signs in this way."""
    email = normalize_email(email if isinstance(email, str) else "")
    try:
        validate_email(email)
        if len(email) > PlayerAccount._meta.get_field("email").max_length:
            raise ValidationError("too long")
    except ValidationError:
        raise ProviderRefused(message="the provider gave no usable e-mail address") from None
    account = (
        PlayerAccount.objects.select_for_update()
        .select_related("user", "player")
        .filter(tenant=tenant, email=email)
        .first()
    )
    if account is None:
        return _provider_sign_up(tenant, email, email_verified, name, request)
    if not email_verified:
        raise ProviderRefused(
            message="the provider has not verified this e-mail: sign in with your password"
        )
    user = account.user
    if user.is_staff or user.is_superuser or getattr(user, "membership", None) is not None:
        raise ProviderRefused(message="a console account cannot sign in here")
    if not user.is_active:
        raise ProviderRefused(message="this account is disabled")
    if reason := blocked_reason(account):  # suspended or banned: as the password door says
        raise ProviderRefused(message=reason)
    linked = account.email_verified_at is None
    if linked:
        user.set_unusable_password()
        user.save(update_fields=["password"])
        end_all_sessions(account)
        account.email_verified_at = timezone.now()
        account.save(update_fields=["email_verified_at"])
    audit.record(
        AuditAction.PLAYER_PROVIDER,
        request=request,
        user=user,
        tenant=tenant,
        details={"account": str(account.id), "verified_now": linked},
    )
    return account


def _provider_sign_up(tenant, email, verified, name, request) -> PlayerAccount:
    policy = app_settings(tenant).signup_policy
    if policy == SignupPolicy.INVITE:
        raise InviteRequired(message="new players join by invite: ask an operator for a link")
    if policy != SignupPolicy.OPEN:
        raise SignupClosed(message="sign-up is closed: ask the operator for an account")
    account = _insert_account(
        tenant,
        email=email,
        password=None,
        display_name=name if isinstance(name, str) else "",
        route=PROVIDER_ROUTE,
        verified=verified,
        request=request,
    )
    if not verified:
        transaction.on_commit(lambda: send_verification(account, request=request))
    return account


def verification_token(account: PlayerAccount) -> str:
    return signing.dumps({"a": str(account.id), "e": account.email}, salt=VERIFY_SALT)


def send_verification(account: PlayerAccount, *, request=None) -> None:
    mail.send_verification(account, verification_token(account), request=request)


def verify_email(token: str) -> PlayerAccount:
    try:
        data = signing.loads(token, salt=VERIFY_SALT, max_age=VERIFY_MAX_AGE)
    except signing.BadSignature:
        raise LinkInvalid(message="this link is invalid or has expired") from None
    account = PlayerAccount.objects.filter(pk=data.get("a"), email=data.get("e")).first()
    if account is None:
        raise LinkInvalid(message="this link is invalid or has expired")
    if account.email_verified_at is None:
        account.email_verified_at = timezone.now()
        account.save(update_fields=["email_verified_at"])
        audit.record(
            AuditAction.PLAYER_VERIFIED, tenant=account.tenant, user=account.user, details={}
        )
    return account


def create_invite(
    tenant, *, max_uses: int = 1, hours: int = 168, note: str = "", by=None, request=None
) -> tuple[Invite, str]:
    """A new invite and its token (shown once; only the hash is kept)."""
    errors: dict[str, list[str]] = {}
    if isinstance(max_uses, bool) or not isinstance(max_uses, int):
        errors["max_uses"] = ["an integer"]
    elif not 1 <= max_uses <= MAX_INVITE_USES:
        errors["max_uses"] = [f"between 1 and {MAX_INVITE_USES}"]
    if isinstance(hours, bool) or not isinstance(hours, int):
        errors["hours"] = ["an integer"]
    elif not 1 <= hours <= MAX_INVITE_HOURS:
        errors["hours"] = [f"between 1 and {MAX_INVITE_HOURS}"]
    if not isinstance(note, str) or len(note) > MAX_NAME:
        errors["note"] = [f"at most {MAX_NAME} characters"]
    if errors:
        raise FieldErrors(errors)
    raw = secrets.token_urlsafe(24)
    invite = Invite.objects.create(
        tenant=tenant,
        token_hash=hash_token(raw),
        note=note,
        max_uses=max_uses,
        expires_at=timezone.now() + timedelta(hours=hours),
        created_by=by,
    )
    audit.record(
        AuditAction.PLAYER_INVITE,
        request=request,
        user=by,
        tenant=tenant,
        details={"invite": str(invite.id), "max_uses": max_uses, "hours": hours},
    )
    return invite, raw


def revoke_invite(invite: Invite, *, by=None, request=None) -> Invite:
    if invite.revoked_at is None:
        invite.revoked_at = timezone.now()
        invite.save(update_fields=["revoked_at"])
        audit.record(
            AuditAction.PLAYER_INVITE,
            request=request,
            user=by,
            tenant=invite.tenant,
            details={"invite": str(invite.id), "revoked": True},
        )
    return invite


def record_device(account: PlayerAccount, request) -> DeviceSession | None:
    """Remember the device a sign-in came from (its session), for the account page."""
    key = request.session.session_key
    if not key:
        request.session.save()
        key = request.session.session_key
    device, _ = DeviceSession.objects.update_or_create(
        session_key=key,
        defaults={
            "tenant_id": account.tenant_id,
            "account": account,
            "user_agent": client_user_agent(request),
            "client_address": client_address(request),
        },
    )
    return device


def touch_device(account: PlayerAccount, request) -> None:
    key = request.session.session_key
    if key:
        DeviceSession.objects.filter(
            account=account, session_key=key, last_seen_at__lt=timezone.now() - SEEN_EVERY
        ).update(last_seen_at=timezone.now())


def revoke_device(account: PlayerAccount, device_id, *, request=None) -> None:
    """Sign a device out: its session ends at once."""
    device = DeviceSession.objects.filter(account=account, pk=device_id).first()
    if device is None:
        raise NotFound(message="no such device")
    SessionStore(session_key=device.session_key).delete()
    device.delete()
    audit.record(
        AuditAction.PLAYER_DEVICE_REVOKED,
        request=request,
        user=account.user,
        tenant=account.tenant,
        details={"device": str(device_id)},
    )


def end_all_sessions(account: PlayerAccount) -> int:
    """Every device of the account signed out (suspension, deletion, password change)."""
    keys = list(DeviceSession.objects.filter(account=account).values_list("session_key", flat=True))
    for key in keys:
        SessionStore(session_key=key).delete()
    DeviceSession.objects.filter(account=account).delete()
    return len(keys)


def confirm_age(account: PlayerAccount, *, request=None) -> PlayerAccount:
    if account.age_confirmed_at is None:
        account.age_confirmed_at = timezone.now()
        account.save(update_fields=["age_confirmed_at"])
    return account
