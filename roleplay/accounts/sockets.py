"""Who a socket's session is as a player of ``/app/``."""

from __future__ import annotations

from roleplay.accounts.access import refusal
from roleplay.accounts.selectors import account_of


def player_for_user(user):
    """The player of a signed-in, verified, unblocked player account, else None."""
    account = account_of(user)
    if account is None or refusal(account):
        return None
    return account.player
