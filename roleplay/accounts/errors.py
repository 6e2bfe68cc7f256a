"""Coded errors of player accounts."""

from __future__ import annotations

from console.failures import Conflict, Invalid, NotFound


class SignupClosed(Invalid):
    default_code = "signup_closed"


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
