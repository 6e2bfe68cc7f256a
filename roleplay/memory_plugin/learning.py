"""The preferences the player states in a chat message, caught by the local rules
(``memory.engine.rules``, no model), become memory entries of the character at once: the
turn plug-in ``memory_learning``, a ``read`` hook that runs before the preferences are
chosen (before ``memory_context``), so the reply to "be brief" is
already brief.

The character's memory settings may turn this off (``enabled``, ``learn_from_rules``) and
set how long a temporary preference lasts (``temporary_days``). Only the player's own
message feeds them, never a reply, tools or injected context, and only
a chat turn's (a regenerate or continue says nothing new; a preview writes nothing). A
preference stated for now is a session entry of this conversation and character that
expires after a day; one stated as lasting ("from now on", "以后") is a persona entry of the
character. A newer one of a category supersedes the older (``memory.entries.services``).
Each entry keeps the phrase it was learned from as evidence (the stored message and the
span), so the console shows where it came from and a rollback of the turn marks it
``source_missing``.

Learning is best effort: a write the entry service refuses (``memory_full`` at the player's
cap, ``memory_busy``) never fails the turn. The refusal is recorded in the turn's trace
(``memory_rules``: the category, the code and the message), which the console shows.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from memory.engine.rules import find_preferences
from memory.entries import evidence
from memory.entries.services import add_entry
from memory.errors import MemoryModelError
from memory.models import EntryOrigin, EntryScope, Message
from roleplay.memory_plugin.context import entries_changed, settings_for
from roleplay.models import TurnKind
from roleplay.turns.plugin import TurnPlugin

logger = logging.getLogger(__name__)


class MemoryLearningPlugin(TurnPlugin):
    name = "memory_learning"
    after = ("worldbook",)
    before = ("memory_context",)  # learning comes before choosing

    def read(self, ctx, conversation) -> None:
        apply(ctx, conversation)


PLUGIN = MemoryLearningPlugin()


def apply(ctx, conversation) -> None:
    if ctx.kind != TurnKind.CHAT or not ctx.record or not ctx.user_input:
        return
    if ctx.settings.memory_runtime != "internal":
        return
    config = settings_for(ctx, conversation)
    if not (config.enabled and config.learn_from_rules):
        return
    found = find_preferences(ctx.user_input)
    if found:
        source = _source(conversation, ctx.turn.user_message_id, ctx.user_input)
        ctx.trace["memory_rules"] = _store(conversation, found, source, config.temporary_days)
        entries_changed(ctx, conversation)


def _source(conversation, message_id, text: str):
    """The stored message the input is, to quote as evidence (None if it is not stored
    as read, e.g. edited meanwhile)."""
    if message_id is None:
        return None
    message = Message.objects.filter(tenant=conversation.tenant, pk=message_id).first()
    return message if message is not None and message.content == text else None


def _store(conversation, found, source, temporary_days: int) -> list[dict]:
    expires = timezone.now() + timedelta(days=temporary_days)
    stored = []
    for item in found:
        try:
            entry = _add(conversation, item, source, expires)
        except MemoryModelError as exc:  # best effort: the turn goes on without it
            logger.info("a stated preference was not stored: %s", exc.code)
            stored.append(
                {"category_key": item.category_key, "refused": exc.code, "message": exc.message}
            )
            continue
        stored.append({"id": str(entry.pk), "category_key": item.category_key})
    return stored


def _add(conversation, item, source, expires):
    """One found preference as an entry of the character, with its evidence (both or
    neither)."""
    with transaction.atomic():
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
            source_missing=source is None,
        )
        if source is not None:
            evidence.attach(conversation.tenant, entry, source, item.start, item.end)
        return entry
