"""The preferences the player states in a chat message, caught by the local rules
(``memory.engine.rules``, no model), become memory entries of the character at once: a
context hook that runs before the preferences are chosen, so the reply to "be brief" is
already brief.

Only the player's own message feeds them, never a reply, tools or injected context, and only
a chat turn's (a regenerate or continue says nothing new; a preview writes nothing). A
preference stated for now is a session entry of this conversation and character that
expires after a day; one stated as lasting ("from now on", "以后") is a persona entry of the
character. A newer one of a category supersedes the older (``memory.entries.services``).
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memory.engine.rules import TEMPORARY_DAYS, find_preferences
from memory.entries.services import add_entry
from memory.models import EntryOrigin, EntryScope
from roleplay.models import TurnKind


def apply(ctx, conversation) -> None:
    if ctx.kind != TurnKind.CHAT or not ctx.record or not ctx.user_input:
        return
    found = find_preferences(ctx.user_input)
    if found:
        ctx.trace["memory_rules"] = _store(conversation, found)


def _store(conversation, found) -> list[dict]:
    expires = timezone.now() + timedelta(days=TEMPORARY_DAYS)
    stored = []
    for item in found:
        entry = add_entry(
            conversation.tenant,
            conversation.player,
            kind=item.kind,
            scope=EntryScope.SESSION if item.temporary else EntryScope.PERSONA,
            content=item.content,
            category_key=item.category_key,
            character_id=str(conversation.character_id),
            session_id=conversation.session_id if item.temporary else "",
            origin=EntryOrigin.RULE,
            expires_at=expires if item.temporary else None,
        )
        stored.append({"id": str(entry.pk), "category_key": item.category_key})
    return stored
