"""Reads of a conversation's Compact checkpoints for the operator (seed 002, Compact): every
version kept, one by number, the compact config they were made under, and the messages a
checkpoint covers. The REST API (``roleplay.compact.api``), the console's Summaries page
(``roleplay.compact.views``) and the operator's actions (``compact.services.edits``) read
through here, so they agree on what "the conversation's checkpoints" are.

Checkpoints are kept per conversation and scenario: the ones shown are those of the scenario
the conversation runs, else of the scenario it was last compacted under.
"""

from __future__ import annotations

from pydantic import ValidationError

from memory import forks
from memory.models import Message
from roleplay.models import CompactCheckpoint, CompactPreparation, Conversation, Scenario
from roleplay.scenarios.config import Compact
from roleplay.scenarios.selectors import scenario_for

MAX_INT = 2**31 - 1  # version numbers are PostgreSQL integers
CHAT_ROLES = ("user", "assistant")


def scenario_id_for(conversation: Conversation):
    """The scenario whose checkpoints are shown: the one the conversation runs when it has
    any there, else the one of its most recent checkpoint, else the one it runs (or None)."""
    scenario = scenario_for(conversation)
    mine = CompactCheckpoint.objects.filter(
        tenant_id=conversation.tenant_id, conversation=conversation
    )
    if scenario is not None and mine.filter(scenario=scenario).exists():
        return scenario.pk
    latest = mine.order_by("-created_at", "-version").values_list("scenario_id", flat=True)
    return latest.first() or (scenario.pk if scenario is not None else None)


def versions_of(conversation_id, scenario_id):
    """Every version of the checkpoint a conversation keeps under one scenario, newest first:
    the one "newest checkpoint" rule (its first row). A turn reads it through its
    one-statement twin ``compact.services.checkpoints.newest``, pinned to this queryset by
    tests/compact/test_checkpoint_reads.py; the operator's reads and edits use it as is."""
    rows = CompactCheckpoint.objects.filter(
        conversation_id=conversation_id, scenario_id=scenario_id
    )
    return rows.order_by("-version")


def versions(conversation: Conversation):
    """Every version of the conversation's checkpoint under the shown scenario, newest first."""
    rows = versions_of(conversation.pk, scenario_id_for(conversation))
    return rows.filter(tenant_id=conversation.tenant_id)


def preparation(conversation: Conversation, newest: CompactCheckpoint | None):
    """The next checkpoint prepared in the background that a turn would still adopt: made
    for the shown scenario over ``newest`` (None: over no checkpoint), else None."""
    return CompactPreparation.objects.filter(
        tenant_id=conversation.tenant_id,
        conversation=conversation,
        scenario_id=scenario_id_for(conversation),
        base_version=newest.version if newest is not None else 0,
    ).first()


def version_number(text) -> int | None:
    """A version as a path names it: digits within a PostgreSQL integer, else None."""
    text = str(text)
    if not (text.isascii() and text.isdigit()) or len(text) > 10 or int(text) > MAX_INT:
        return None
    return int(text)


def version(conversation: Conversation, number) -> CompactCheckpoint | None:
    """Version ``number`` (an int or the path's text), or None."""
    wanted = version_number(number)
    if wanted is None:
        return None
    return versions(conversation).filter(version=wanted).first()


def newest(conversation: Conversation) -> CompactCheckpoint | None:
    return versions(conversation).first()


def compact_of(scenario: Scenario | None) -> Compact | None:
    """The scenario's ``compact`` config, on or off (an operator may act on checkpoints while
    compaction is paused); None when it has none or it no longer validates."""
    if scenario is None or not isinstance(scenario.compact, dict) or not scenario.compact:
        return None
    try:
        return Compact.model_validate(scenario.compact, strict=False)
    except ValidationError:
        return None


def _chat(conversation: Conversation):
    """The conversation's messages a turn reads as history (unarchived, user or assistant,
    with text)."""
    return _stored(conversation).filter(archived=False, role__in=CHAT_ROLES).exclude(content="")


def _stored(conversation: Conversation):
    """The conversation's stored messages: a branch's include those it shares with its
    parent up to the fork point (``memory.forks``; a branch's own come later in ``ts``)."""
    segments = forks.lineage(conversation.tenant_id, conversation.session_id)
    return Message.objects.filter(forks.history_filter(segments), tenant_id=conversation.tenant_id)


def stored_chat(conversation: Conversation) -> list[Message]:
    """Every message of the conversation a turn would read as history, however old,
    oldest first: what a checkpoint's covered messages are checked against when the
    history changes (``compact.services.history``)."""
    return list(_chat(conversation).only("id", "role", "content", "ts").order_by("ts"))


def covered_messages(conversation: Conversation, row: CompactCheckpoint) -> list[Message] | None:
    """The messages ``row`` covers as a turn reads them (unarchived, user or assistant, with
    text), oldest first; None when they are no longer all there: an end message deleted or
    archived, or a different number of messages between the ends."""
    chat = _chat(conversation)
    ends = {
        str(m.pk): m.ts for m in chat.filter(pk__in=[row.first_message_id, row.last_message_id])
    }
    first, last = ends.get(str(row.first_message_id)), ends.get(str(row.last_message_id))
    if first is None or last is None or first > last:
        return None
    span = list(chat.filter(ts__gte=first, ts__lte=last).order_by("ts"))
    return span if len(span) == row.covered_count else None


def covered_ids(conversation: Conversation, row: CompactCheckpoint | None) -> set[str]:
    """Ids of the stored messages between ``row``'s covered ends (inclusive), whatever their
    role or state: what the transcript marks as covered."""
    if row is None:
        return set()
    stored = _stored(conversation)
    ends = stored.filter(pk__in=[row.first_message_id, row.last_message_id]).values_list("pk", "ts")
    by_id = {str(pk): ts for pk, ts in ends}
    first, last = by_id.get(str(row.first_message_id)), by_id.get(str(row.last_message_id))
    if first is None or last is None:
        return set(by_id)
    rows = stored.filter(ts__gte=first, ts__lte=last).values_list("pk", flat=True)
    return {str(pk) for pk in rows}
