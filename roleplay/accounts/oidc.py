"""Sign-in of players through an OpenID Connect provider, by django-allauth (docs/players.md).

allauth runs the protocol: the provider's discovery document, the authorization redirect with
its state and PKCE, the code exchange and the ID token's checks. Everything after is ours: at
``pre_social_login`` the provider's identity goes to :func:`services.provider_account`, which
finds or makes *our* player account of the tenant ``/app/`` serves, and the player is signed in
exactly as the password form signs them in (the same backend, the device recorded). allauth's
users, e-mail rows and social accounts are never written, and none of its pages is shown: a
refusal or a failed exchange answers with the app's own page.

The client (its id and secret) is the settings' ``SOCIALACCOUNT_PROVIDERS`` app only, built
from ``OIDC_*``: a ``SocialApp`` row in the database is never read, so the secret is never
stored there.
"""

from __future__ import annotations

from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.providers.base.constants import AuthError
from django.conf import settings
from django.contrib.auth import login
from django.shortcuts import redirect, render
from django.urls import reverse

from console.failures import DomainError
from roleplay.accounts import services
from roleplay.accounts.access import UNVERIFIED, refusal
from roleplay.accounts.selectors import app_tenant

BACKEND = "roleplay.accounts.backend.PlayerEmailBackend"  # the password form's, for sessions


def provider_app() -> dict | None:
    """The provider's client as the settings declare it, or None when sign-on is off."""
    apps = settings.SOCIALACCOUNT_PROVIDERS.get("openid_connect", {}).get("APPS") or []
    return apps[0] if apps and apps[0].get("settings", {}).get("server_url") else None


def button() -> dict | None:
    """The sign-in pages' button: its label and where it posts (None when sign-on is off)."""
    app = provider_app()
    if app is None:
        return None
    url = reverse("openid_connect_login", kwargs={"provider_id": settings.OIDC_PROVIDER_ID})
    return {"label": f"Sign in with {app.get('name') or 'single sign-on'}", "url": url}


def refused(request, message: str, *, status: int = 403):
    """The app's page for a sign-in through the provider that did not end signed in."""
    context = {"message": message}
    return render(request, "app/oidc_refused.html", context, status=status)


def _identity(sociallogin) -> tuple[str, bool, str]:
    """(e-mail, whether the provider verified it, name) of the provider's answer."""
    addresses = sociallogin.email_addresses or []
    email = addresses[0] if addresses else None
    data = sociallogin.account.extra_data or {}
    claims = data.get("userinfo") or data.get("id_token") or {}
    name = claims.get("name") or claims.get("preferred_username") or ""
    if email is None:
        return "", False, name
    return email.email or "", bool(email.verified), name if isinstance(name, str) else ""


class PlayerSocialAdapter(DefaultSocialAccountAdapter):
    """allauth's hooks: our accounts, our pages, the settings' client only."""

    def list_apps(self, request, provider=None, client_id=None):
        apps = super().list_apps(request, provider=provider, client_id=client_id)
        return [app for app in apps if app.pk is None]  # the settings' app, never a row

    def pre_social_login(self, request, sociallogin) -> None:
        from roleplay.accounts.views.app import safe_next

        tenant = app_tenant()
        if tenant is None:
            raise ImmediateHttpResponse(refused(request, "this site has no players yet"))
        email, verified, name = _identity(sociallogin)
        try:
            account = services.provider_account(
                tenant, email=email, email_verified=verified, name=name, request=request
            )
        except DomainError as exc:
            raise ImmediateHttpResponse(refused(request, exc.message)) from None
        reason = refusal(account)
        if reason == UNVERIFIED:  # a new account whose provider did not verify the e-mail
            request.session["pending_account"] = str(account.id)
            raise ImmediateHttpResponse(redirect("app_verify_pending"))
        if reason:
            raise ImmediateHttpResponse(refused(request, reason))
        login(request, account.user, backend=BACKEND)
        services.record_device(account, request)
        target = safe_next(request, (sociallogin.state or {}).get("next") or "")
        raise ImmediateHttpResponse(redirect(target))

    def on_authentication_error(
        self, request, provider, error=None, exception=None, extra_context=None
    ) -> None:
        message = (
            "The sign-in was cancelled."
            if error == AuthError.CANCELLED
            else "The sign-in with the provider did not complete: please try again."
        )
        raise ImmediateHttpResponse(refused(request, message, status=400))
