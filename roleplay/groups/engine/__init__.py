"""The pure rules of group chats: who speaks next (``speakers``) and the speaking
character's view of the group (``cards``). No Django."""

from .cards import Sheet, joined, members_block, named, nudge, short
from .speakers import (
    DEFAULT_TALKATIVENESS,
    MODES,
    Member,
    activate_natural,
    find_member,
    next_speaker,
    pooled_remaining,
)

__all__ = [
    "Sheet",
    "joined",
    "members_block",
    "named",
    "nudge",
    "short",
    "DEFAULT_TALKATIVENESS",
    "MODES",
    "Member",
    "activate_natural",
    "find_member",
    "next_speaker",
    "pooled_remaining",
]
