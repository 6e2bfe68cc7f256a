"""The mails of player accounts, sent through Django's mail backend (docs/players.md)."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse


def absolute(path: str, request=None) -> str:
    if request is not None:
        return request.build_absolute_uri(path)
    return f"{settings.PUBLIC_URL.rstrip('/')}{path}" if settings.PUBLIC_URL else path


def send_verification(account, token: str, *, request=None) -> None:
    link = absolute(reverse("app_verify", args=[token]), request)
    send_mail(
        "Confirm your e-mail address",
        "Welcome! Open this link to confirm your e-mail address and start playing:\n\n"
        f"{link}\n\nThe link works for three days. If you did not sign up, ignore this mail.",
        settings.DEFAULT_FROM_EMAIL,
        [account.email],
    )
