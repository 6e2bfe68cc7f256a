"""Reads of the runtime for the console: lists with counts, transcripts, dashboard figures.

All reads go through ``console.scoping.scoped`` and take the tenant explicitly. The message
store keys sessions by the conversation id as text (no foreign key, so the capability stands
alone); the subqueries here join on that text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import (
    CharField,
    Count,
    IntegerField,
    OuterRef,
    Subquery,
    Value,
)
from django.db.models.functions import Cast, Coalesce, Greatest
from django.utils import timezone

from console.scoping import scoped
from memory import selectors as message_reads
from memory.models import Message
from roleplay.characters.selectors import starter_character
from roleplay.llm.gateway import env_default_config, resolve_config
from roleplay.models import (
    Character,
    Conversation,
    ModelCall,
    ModelConfig,
    Turn,
    TurnStatus,
)

# The named sections of a turn trace, in the order the console shows them.
TRACE_SECTIONS = ("read", "phases", "prompt", "model", "error")


def _session_messages():
    return Message.objects.filter(
        tenant=OuterRef("tenant"), session_id=Cast(OuterRef("id"), output_field=CharField())
    ).order_by()


def conversation_list(tenant, *, character=None, status: str | None = None):
    """Conversations, most recently active first, with message count and last activity
    (the later of the row's own update and its newest stored message)."""
    counts = _session_messages().values("session_id").annotate(n=Count("pk")).values("n")
    last = _session_messages().order_by("-ts").values("created_at")[:1]
    qs = scoped(Conversation, tenant).select_related("character", "player", "model_config")
    if character is not None:
        qs = qs.filter(character=character)
    if status:
        qs = qs.filter(status=status)
    return qs.annotate(
        message_count=Coalesce(Subquery(counts, output_field=IntegerField()), Value(0)),
        last_activity=Greatest("updated_at", Subquery(last)),
    ).order_by("-last_activity", "-created_at")


@dataclass
class TurnView:
    """A turn as the transcript shows it: its row and the trace split into sections."""

    turn: Turn
    number: int
    sections: list[tuple[str, str]] = field(default_factory=list)

    @property
    def has_trace(self) -> bool:
        return bool(self.sections)


@dataclass
class Transcript:
    messages: list[Message]
    turns: list[TurnView]
    turn_of_message: dict[str, TurnView]


def _pretty(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def trace_sections(trace: dict | None) -> list[tuple[str, str]]:
    """(label, pretty JSON) pairs: read, prompt, model, error first, then any other keys
    capabilities added (worldbook selection, memory...), so nothing in the trace is hidden."""
    trace = trace or {}
    sections = [(name, _pretty(trace[name])) for name in TRACE_SECTIONS if name in trace]
    sections += [(k, _pretty(v)) for k, v in sorted(trace.items()) if k not in TRACE_SECTIONS]
    return sections


def conversation_transcript(tenant, conversation: Conversation) -> Transcript:
    """Every stored message (archived included) and every turn with its trace."""
    messages = message_reads.get_full_history(tenant, conversation.session_id)
    turns = list(
        scoped(Turn, tenant)
        .filter(conversation=conversation)
        .select_related("model_config")
        .order_by("started_at")
    )
    views = [TurnView(t, i, trace_sections(t.trace)) for i, t in enumerate(turns, start=1)]
    by_message: dict[str, TurnView] = {}
    for view in views:
        by_message[str(view.turn.user_message_id)] = view
        by_message[str(view.turn.assistant_message_id)] = view
    return Transcript(messages=messages, turns=views, turn_of_message=by_message)


def dashboard_stats(tenant, *, now=None) -> dict:
    """Counts for the dashboard; the demo notice applies when replies come from the bundled
    demo model: the tenant's default is a demo config, or there is no default and the
    environment's fallback is the local llama.cpp provider."""
    since = (now or timezone.now()) - timedelta(hours=24)
    default = resolve_config(tenant)
    uses_demo = default.is_demo if default else env_default_config().provider == "llama_cpp"
    return {
        "characters": scoped(Character, tenant).count(),
        "conversations": scoped(Conversation, tenant).count(),
        "model_calls_24h": scoped(ModelCall, tenant).filter(created_at__gte=since).count(),
        "failed_turns_24h": scoped(Turn, tenant)
        .filter(status=TurnStatus.FAILED, started_at__gte=since)
        .count(),
        "default_config": default,
        "demo_model": uses_demo,
        "starter_character": starter_character(tenant),
        "real_model": scoped(ModelConfig, tenant).filter(is_demo=False).exists(),
    }
