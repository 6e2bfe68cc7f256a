"""Coded errors of player accounts."""

from __future__ import annotations

from console.failures import Conflict, Invalid, NotFound


class SignupClosed(Invalid):
    default_code = "signup_closed"


class InviteRequired(Invalid):
    """A new player through the sign-on provider while sign-up is by invite only."""

    default_code = "invite_required"


class ProviderRefused(Invalid):
    """An identity from the sign-on provider that may not sign in (docs/players.md)."""

    default_code = "provider_refused"


class InviteInvalid(Invalid):
    """An invite that is unknown, used up, expired or revoked: one answer for all four."""

    default_code = "invite_invalid"


class EmailTaken(Conflict):
    default_code = "email_taken"


class AccountNotFound(NotFound):
    default_code = "account_not_found"


class LinkInvalid(Invalid):
    """A verification link that is forged, expired or for an e-mail since changed."""

    default_code = "link_invalid"
