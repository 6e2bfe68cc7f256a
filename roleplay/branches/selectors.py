"""Reads of branches and bookmarks: a conversation's branches (with the message each was
branched at), the chain of conversations it was branched from, its bookmarks."""

from __future__ import annotations

from roleplay.branches.models import Bookmark
from roleplay.models import Conversation

MAX_DEPTH = 50  # how far up a chain of branches the play page follows
MAX_LISTED = 200  # branches and bookmarks the play page lists


def branches_of(conversation: Conversation):
    """The conversations branched from this one, oldest first."""
    return Conversation.objects.filter(
        tenant_id=conversation.tenant_id, parent_id=conversation.pk
    ).order_by("created_at")


def ancestors_of(conversation: Conversation) -> list[Conversation]:
    """The conversation it was branched from, that one's, and so on: the root first."""
    chain: list[Conversation] = []
    parent_id = conversation.parent_id
    while parent_id is not None and len(chain) < MAX_DEPTH:
        parent = Conversation.objects.filter(tenant_id=conversation.tenant_id, pk=parent_id).first()
        if parent is None:
            break
        chain.append(parent)
        parent_id = parent.parent_id
    chain.reverse()
    return chain


def bookmarks_of(conversation: Conversation):
    return Bookmark.objects.filter(conversation=conversation).order_by("created_at")


def branch_tree(conversation: Conversation) -> dict:
    """What the play page shows of the tree: the chain the conversation was branched from
    (``lineage``, the root first), its own ``branches`` and its ``bookmarks``."""
    return {
        "lineage": ancestors_of(conversation),
        "branches": list(branches_of(conversation)[:MAX_LISTED]),
        "bookmarks": list(bookmarks_of(conversation)[:MAX_LISTED]),
    }
