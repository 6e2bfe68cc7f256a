"""The message store's errors (``console.failures`` kinds; HTTP is decided in one place)."""

from __future__ import annotations

from console.failures import Conflict, DomainError, Invalid, NotFound


class MessageStoreError(DomainError):
    """Base of the message store's errors."""


class MessageNotFound(MessageStoreError, NotFound):
    default_code = "message_not_found"


class NoSuchAlternative(MessageStoreError, Invalid):
    default_code = "alternative_not_found"


class MessageConflict(MessageStoreError, Conflict):
    default_code = "message_conflict"
