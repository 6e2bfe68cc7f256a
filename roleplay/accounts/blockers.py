"""Why an account may not play now, beyond its own state: the rule's one list.

Moderation adds its reasons to :data:`BLOCKERS` at start-up (``roleplay.apps``): each is
``f(account) -> str``, "" when it does not block. Read by every door (``access``, the chat
socket, the sign-on provider's service); it imports nothing of the accounts, so services
may ask it too.
"""

from __future__ import annotations

BLOCKERS: list = []


def blocked_reason(account) -> str:
    """Why the account may not play now ("" when it may)."""
    for blocker in BLOCKERS:
        reason = blocker(account)
        if reason:
            return reason
    return ""
