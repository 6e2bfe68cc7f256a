"""Evidence of memory entries: the span of a stored message an entry was learned from.

The quote is the span's text, scrubbed (``memory.engine.scrub``) and at most
``MEMORY_MAX_QUOTE_CHARS`` (seed 004: 1,000) characters. Preferences and agreements are
learned from the player's own words only: their evidence must be a user message. When the
messages an entry was learned from are deleted (a rollback, a cleared conversation), the
evidence goes with them (a foreign key) and the entry is marked ``source_missing``.
"""

from __future__ import annotations

from django.conf import settings

from memory.engine.entries import SUPERSEDING_KINDS
from memory.engine.scrub import scrub
from memory.errors import MemoryInvalid
from memory.models import MemoryEntry, MemoryEvidence, Message


def max_quote_chars() -> int:
    return int(getattr(settings, "MEMORY_MAX_QUOTE_CHARS", 1000))


def attach(tenant, entry: MemoryEntry, message: Message, start: int, end: int) -> MemoryEvidence:
    """Record that ``entry`` was learned from ``message``'s characters ``start``..``end``."""
    if message.tenant_id != tenant.pk or entry.tenant_id != tenant.pk:
        raise MemoryInvalid("invalid_evidence", "the message is not this tenant's")
    if entry.kind in SUPERSEDING_KINDS and message.role != "user":
        raise MemoryInvalid(
            "evidence_not_user",
            "preferences and agreements are learned from the player's own messages only",
            {"role": message.role},
        )
    if not (isinstance(start, int) and isinstance(end, int)) or not (
        0 <= start < end <= len(message.content)
    ):
        raise MemoryInvalid(
            "invalid_span",
            f"the span must lie within the message (0 ≤ start < end ≤ {len(message.content)})",
            {"start": start, "end": end},
        )
    if end - start > max_quote_chars():
        raise MemoryInvalid(
            "quote_too_long",
            f"a quote holds at most {max_quote_chars()} characters",
            {"max_chars": max_quote_chars()},
        )
    quote = scrub(message.content[start:end]).text[: max_quote_chars()]
    return MemoryEvidence.objects.create(
        tenant=tenant,
        entry=entry,
        message=message,
        start=start,
        end=end,
        quote=quote,
        role=message.role,
    )


def entries_of_messages(messages) -> list:
    """Ids of the entries with evidence in ``messages`` (a queryset), before they go."""
    return list(
        MemoryEvidence.objects.filter(message__in=messages)
        .values_list("entry_id", flat=True)
        .distinct()
    )


def mark_orphans(entry_ids) -> int:
    """Entries of ``entry_ids`` left with no evidence become ``source_missing``."""
    if not entry_ids:
        return 0
    return (
        MemoryEntry.objects.filter(pk__in=entry_ids, source_missing=False)
        .exclude(evidence__isnull=False)
        .update(source_missing=True)
    )
