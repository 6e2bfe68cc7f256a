"""The audit log: every write of :class:`~console.models.AuditEvent` goes through :func:`record`.

Login events come from Django's auth signals, so every door that logs a user in (the console
form, the admin site) is audited without each view remembering to. What is kept: the action,
the account, its tenant, the client address (``console.clients``), the user agent, and
small details. What is never kept: passwords, tokens, or a login name that matches no account
(people type their password into the name field; such attempts keep only the fact that
the name was unknown).
"""

from __future__ import annotations

import logging

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed

from console.clients import client_address, client_user_agent
from console.models import AuditAction, AuditEvent

log = logging.getLogger("console.audit")


def record(
    action: str,
    *,
    request=None,
    user=None,
    username: str = "",
    details: dict | None = None,
    tenant=None,
) -> AuditEvent:
    """Store one event; the tenant is the user's (or ``tenant``, for a caller with no
    account: an API token), the address and agent the request's."""
    membership = getattr(user, "membership", None) if user is not None else None
    event = AuditEvent.objects.create(
        action=action,
        tenant=membership.tenant if membership else (tenant or _player_tenant(user)),
        user=user,
        username=(user.get_username() if user is not None else username)[:150],
        client_address=client_address(request) if request is not None else None,
        user_agent=client_user_agent(request) if request is not None else "",
        details=details or {},
    )
    log.info(
        "audit %s",
        action,
        extra={"audit_action": action, "username": event.username, "address": event.client_address},
    )
    return event


def actor(who):
    """Who does a write, for :func:`record_by`: a console user as is; a REST caller
    (``console.auth.Principal``) as its user, or its API token by name and prefix."""
    if not hasattr(who, "token"):
        return who
    if who.user is not None:
        return who.user
    token = who.token
    return f"api token {token.name} ({token.prefix})" if token is not None else "api"


def record_by(action: str, by, *, tenant, request=None, details: dict | None = None):
    """:func:`record` of a write done ``by`` a console user or a name (see :func:`actor`)."""
    user, name = (None, by) if isinstance(by, str) else (by, "")
    return record(action, request=request, user=user, username=name, tenant=tenant,
                  details=details)  # fmt: skip


def _player_tenant(user):
    """The tenant of a player account's user (players have no membership), else None."""
    account = getattr(user, "player_account", None) if user is not None else None
    return getattr(account, "tenant", None)


def account_named(username: str | None):
    """The user a login attempt named, or None (no such account, or no name at all)."""
    if not username:
        return None
    User = get_user_model()
    return User.objects.filter(**{User.USERNAME_FIELD: username}).first()


def on_login_failed(sender, credentials: dict, request=None, **kwargs) -> None:
    """A failed login. Connected after django-axes' receiver (``ConsoleConfig.ready``), so
    ``request.axes_locked_out`` already tells whether this attempt is over the limit."""
    user = account_named(credentials.get(get_user_model().USERNAME_FIELD))
    details = {"locked_out": bool(getattr(request, "axes_locked_out", False))}
    if user is None:
        details["unknown_account"] = True
    record(AuditAction.LOGIN_FAILED, request=request, user=user, details=details)


def on_logged_in(sender, request, user, **kwargs) -> None:
    record(AuditAction.LOGIN_SUCCEEDED, request=request, user=user)


def on_logged_out(sender, request, user, **kwargs) -> None:
    if user is not None:
        record(AuditAction.LOGOUT, request=request, user=user)


def connect() -> None:
    """Listen to the auth signals (idempotent: each receiver has a dispatch uid)."""
    user_login_failed.connect(on_login_failed, dispatch_uid="console.audit.login_failed")
    user_logged_in.connect(on_logged_in, dispatch_uid="console.audit.logged_in")
    user_logged_out.connect(on_logged_out, dispatch_uid="console.audit.logged_out")
