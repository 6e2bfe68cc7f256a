"""Who may open a page of the player app: one rule for every ``/app/`` page.

:func:`player_view` requires a signed-in player account of the tenant ``/app/`` serves, with
its e-mail verified; it puts the account, player and tenant on the request, so every read
of a page is scoped to the signed-in player (another player's object is a 404). Signing in
again is the answer to anything else: a console user, a removed account, a device signed
out elsewhere.
"""

from __future__ import annotations

from functools import wraps
from urllib.parse import urlencode

from django.shortcuts import redirect, render

from roleplay.accounts import services
from roleplay.accounts.blockers import blocked_reason
from roleplay.accounts.selectors import account_of, app_tenant

LOGIN_URL = "/app/login/"


UNVERIFIED = "unverified"


def refusal(account) -> str:
    """Why a signed-in player account may not play now: :data:`UNVERIFIED` (its e-mail is
    not verified yet), a blocker's reason, or "" when it may. The one rule of every door
    (pages, the chat socket)."""
    if account.email_verified_at is None:
        return UNVERIFIED
    return blocked_reason(account)


def player_view(view):
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        account = account_of(request.user)
        tenant = app_tenant()
        if account is None or tenant is None or account.tenant_id != tenant.pk:
            if request.user.is_authenticated:  # a console user: not a player here
                return render(request, "app/not_player.html", status=403)
            return redirect(f"{LOGIN_URL}?{urlencode({'next': request.get_full_path()})}")
        reason = refusal(account)
        if reason == UNVERIFIED:
            return redirect("app_verify_pending")
        if reason:
            return render(request, "app/blocked.html", {"reason": reason}, status=403)
        services.touch_device(account, request)
        request.account, request.player, request.tenant = account, account.player, tenant
        return view(request, *args, **kwargs)

    return wrapped
