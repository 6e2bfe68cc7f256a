"""The errors of the message store and the memory model (``console.failures`` kinds; HTTP is
decided in one place)."""

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


class MessageShared(MessageStoreError, Conflict):
    """A fork of the session shares the message (``memory.forks``): it is frozen."""

    default_code = "message_shared"


class MemoryModelError(DomainError):
    """Base of the memory model's errors (documents, entries, handoffs)."""


class MemoryInvalid(MemoryModelError, Invalid):
    """A memory write that breaks a rule of the model (422, the code names the rule)."""


class RevisionConflict(MemoryModelError, Conflict):
    """The stored revision is not the one the write was based on; ``details`` carry the
    ``current_revision`` to read again and decide again (never to force the old proposal)."""

    default_code = "revision_conflict"


class MemoryConflict(MemoryModelError, Conflict):
    """The stored state does not allow this write now (409; the code says why)."""


class MemoryNotFound(MemoryModelError, NotFound):
    default_code = "memory_entry_not_found"
