"""Writes of branches and bookmarks.

A branch is a new conversation that shares its parent's history up to a message (the fork
point) without a copy of the messages (``memory.forks``), with the parent's player,
character, persona, model config, scenario and author's note. It is like a rollback to the
fork point in a new conversation: every derived layer starts from the revision in force at
that point (Agent V2: ``agentic.services.branch_start``; Story: ``story.edits.start_branch``;
memory documents: ``memory.documents.services.start_fork``; Compact:
``compact.services.branch_start``); docs/branches.md has the rules.

Choosing another alternative of an older reply (one with messages after it) makes a branch
too: it forks just before the reply and stores the chosen text as the branch's first
message, so the parent keeps the rest of its history as it was.

A bookmark names a message of the history (its own or a shared one), unique per conversation.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from console.scoping import LOOKUP_MISSES
from memory import forks
from memory import selectors as message_reads
from memory import services as message_store
from memory.documents import services as documents
from memory.errors import NoSuchAlternative
from memory.models import Message
from roleplay.agentic.services import branch_start
from roleplay.branches import selectors
from roleplay.branches.models import MAX_NAME, Bookmark
from roleplay.compact.services import branch_start as compact_start
from roleplay.conversations.services.messages import message_in_history, quiet
from roleplay.errors import BadBookmarkName, Duplicate, NotFound
from roleplay.models import Conversation
from story import edits as story_edits

BRANCH_TITLE_SUFFIX = " (branch)"


@transaction.atomic
def create_branch(conversation: Conversation, message_id, *, alternative: int | None = None):
    """A new conversation whose history is this one's up to and including ``message_id``;
    with ``alternative``, up to just before it, followed by a copy of that alternative of
    the message as the branch's own first message (a swipe of an older reply)."""
    quiet(conversation)
    message = message_in_history(conversation, message_id)
    if alternative is None:
        return _branch(conversation, message, before=False)
    chosen = message.alternatives.filter(index=alternative).first()
    if chosen is None:
        raise NoSuchAlternative(
            message=f"the message has no alternative {alternative}",
            details={"index": alternative},
        )
    branch = _branch(conversation, message, before=True)
    message_store.save_message(
        conversation.tenant,
        branch.session_id,
        role=message.role,
        content=chosen.content,
        kind=message.kind,
        metadata={"swiped_from": str(message.id), "alternative": alternative},
    )
    return branch


def _branch(conversation: Conversation, message: Message, *, before: bool) -> Conversation:
    tenant = conversation.tenant
    title = (conversation.title or "")[: 200 - len(BRANCH_TITLE_SUFFIX)]
    branch = Conversation.objects.create(
        tenant=tenant,
        player_id=conversation.player_id,
        character_id=conversation.character_id,
        model_config_id=conversation.model_config_id,
        persona_id=conversation.persona_id,
        scenario_id=conversation.scenario_id,
        author_note=conversation.author_note,
        greeting_index=conversation.greeting_index,
        title=f"{title}{BRANCH_TITLE_SUFFIX}" if title else "",
        parent=conversation,
        fork_message_id=message.id,
    )
    segments = forks.fork(
        tenant, conversation.session_id, branch.session_id, message, before=before
    )
    # the layers' revisions are looked for in the parent, then in its own parent...
    sources = [conversation, *reversed(selectors.ancestors_of(conversation))]
    branch_start.start_branch(sources, branch, segments)

    def position() -> int:
        return message_reads.count_chat_messages(tenant, branch.session_id)

    story_edits.start_branch(tenant.pk, [c.pk for c in sources], branch.pk, position)
    compact_start.start_branch(sources, branch, segments)
    sessions = [c.session_id for c in sources]
    documents.start_fork(tenant, sessions, branch.session_id, message.created_at)
    return branch


def add_bookmark(conversation: Conversation, message_id, name: str) -> Bookmark:
    """Name a message of the conversation's history; a name is unique per conversation
    (409 ``duplicate``), 1 to 100 characters once trimmed (422 ``invalid_bookmark_name``)."""
    name = (name or "").strip()
    if not name or len(name) > MAX_NAME:
        raise BadBookmarkName(message=f"a bookmark name has 1 to {MAX_NAME} characters")
    message = message_in_history(conversation, message_id)
    taken = Duplicate("name", f"this conversation already has a bookmark named {name!r}")
    if Bookmark.objects.filter(conversation=conversation, name=name).exists():
        raise taken
    try:
        with transaction.atomic():
            return Bookmark.objects.create(
                tenant_id=conversation.tenant_id,
                conversation=conversation,
                message_id=message.id,
                name=name,
            )
    except IntegrityError:  # a concurrent request took the name
        raise taken from None


def delete_bookmark(conversation: Conversation, bookmark_id) -> None:
    try:
        deleted, _ = Bookmark.objects.filter(conversation=conversation, pk=bookmark_id).delete()
    except LOOKUP_MISSES:
        deleted = 0
    if not deleted:
        raise NotFound("bookmark_not_found", "no such bookmark in this conversation")
