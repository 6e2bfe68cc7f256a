"""The two doors of sign-on through the OpenID Connect provider (``roleplay.accounts.oidc``).

allauth's provider views behind our rules: both answer 404 while sign-on is off (or for a
provider id not ours); the way out to the provider is a POST of the sign-in page's button
(with its CSRF token), never a GET, so no page of allauth's is ever shown; a provider that
cannot be reached is the app's page, not a 500.
"""

from __future__ import annotations

import requests
from allauth.socialaccount.providers.openid_connect import views as allauth_oidc
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpResponseNotAllowed

from roleplay.accounts import oidc

UNREACHABLE = "The sign-on provider cannot be reached right now: please try again later."
UNUSABLE = "The sign-on provider's answer could not be used: please tell the operator."


def _guard(request, provider_id: str, method: str):
    if oidc.provider_app() is None or provider_id != settings.OIDC_PROVIDER_ID:
        raise Http404("no such sign-on provider")
    if request.method != method:
        return HttpResponseNotAllowed([method])
    return None


def begin(request, provider_id: str):
    """The button: off to the provider's authorization page (``next`` travels in the state)."""
    if refused := _guard(request, provider_id, "POST"):
        return refused
    try:
        return allauth_oidc.login(request, provider_id)
    except (requests.RequestException, KeyError, ValueError):
        return oidc.refused(request, UNREACHABLE, status=502)


def callback(request, provider_id: str):
    """Back from the provider: the code exchanged, the player signed in (or refused)."""
    if refused := _guard(request, provider_id, "GET"):
        return refused
    try:
        return allauth_oidc.callback(request, provider_id)
    except requests.RequestException:
        return oidc.refused(request, UNREACHABLE, status=502)
    except (KeyError, ValueError, ImproperlyConfigured):  # no ``sub``, or one over 191 chars
        return oidc.refused(request, UNUSABLE, status=502)
