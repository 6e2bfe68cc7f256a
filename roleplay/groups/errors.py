"""Group chats' coded errors (each kind decides its HTTP status once, in ``console.errors``)."""

from __future__ import annotations

from console import failures
from roleplay.errors import RoleplayError


class MemberNotFound(RoleplayError, failures.NotFound):
    """No such member in this conversation (404 ``member_not_found``)."""

    default_code = "member_not_found"


class MemberExists(RoleplayError, failures.Conflict):
    """The character is a member already (409 ``member_exists``)."""

    default_code = "member_exists"


class GroupRefused(RoleplayError, failures.Invalid):
    """A change the group's rules refuse (422): ``group_full`` (more than
    ``MAX_MEMBERS``), ``member_fixed`` (the conversation's own character stays the first
    member), ``speaker_required`` (a ``manual`` group waits for the player's pick) or
    ``no_speaker`` (nobody unmuted can answer)."""
