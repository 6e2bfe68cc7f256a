"""Reads of the runtime for the console: lists with counts, transcripts, dashboard figures.

All reads go through ``console.scoping.scoped`` and take the tenant explicitly. The message
store keys sessions by the conversation id as text (no foreign key, so the capability stands
alone); the subqueries here join on that text.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import (
    BooleanField,
    CharField,
    Count,
    ExpressionWrapper,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Cast, Coalesce, Greatest
from django.utils import timezone

from console.models import Player
from console.rows import prepared
from console.scoping import is_uuid, scoped
from memory import selectors as message_reads
from memory.models import Message
from roleplay.agentic.config import AgenticV2, Compact, ScenarioConfig, StoryV1
from roleplay.cards.images import CONTENT_TYPE, default_avatar, etag
from roleplay.llm.gateway import env_default_config, resolve_config
from roleplay.models import (
    Character,
    Conversation,
    ModelCall,
    ModelConfig,
    Persona,
    Scenario,
    Turn,
    TurnStatus,
)

# The named sections of a turn trace, in the order the console shows them.
TRACE_SECTIONS = ("read", "phases", "prompt", "model", "error")


def without_avatars(qs):
    """``qs`` without the avatar bytes (a list must not load every image), each row with
    ``avatar_set``: whether it has one (see :func:`has_avatar`)."""
    flag = ExpressionWrapper(Q(avatar__isnull=False), output_field=BooleanField())
    return qs.defer("avatar").annotate(avatar_set=flag)


def has_avatar(obj) -> bool:
    """Whether a character or persona has an avatar, without loading it when the row came
    from :func:`without_avatars`."""
    flag = getattr(obj, "avatar_set", None)
    return flag if flag is not None else obj.avatar is not None


@dataclass(frozen=True)
class Avatar:
    """An avatar to serve: PNG bytes, their type and validator, and whether it is the plain
    generated image of an owner that has none."""

    data: bytes
    content_type: str
    etag: str
    generated: bool


def avatar_of(owner) -> Avatar:
    """The avatar of a character or persona, or a plain image made from its name."""
    if owner.avatar is not None:
        data = bytes(owner.avatar)
        return Avatar(data, owner.avatar_content_type or CONTENT_TYPE, etag(data), False)
    data = default_avatar(owner.name)
    return Avatar(data, CONTENT_TYPE, etag(data), True)


def greeting_choices(character: Character) -> list[tuple[int, str]]:
    """(greeting_index, text) of every opening a conversation with ``character`` may choose:
    0 the first message, n the n-th alternate greeting."""
    openings = [character.first_message, *(character.alternate_greetings or [])]
    return [(index, text) for index, text in enumerate(openings) if isinstance(text, str)]


def greeting_for(conversation: Conversation) -> str:
    """The opening line of ``conversation``: its character's first message, or the alternate
    greeting it chose; the first message again if that greeting was removed since; none
    ("") when the conversation has no opening."""
    character = conversation.character
    alternates = character.alternate_greetings or []
    index = conversation.greeting_index
    if index is None:
        return ""
    if 0 < index <= len(alternates) and isinstance(alternates[index - 1], str):
        return alternates[index - 1]
    return character.first_message


@dataclass(frozen=True)
class ActivePersona:
    """Who the player is in a conversation: ``{{user}}`` is ``name``, ``{{persona}}`` is
    ``description``. ``source`` says where it came from: the ``conversation``'s choice,
    the player's ``default``, or the ``player`` themselves (no persona: their name)."""

    name: str
    description: str
    source: str
    persona_id: str | None = None


# Every turn without a chosen persona reads this; pinned to the ORM read
# (``Persona.objects.filter(player_id=..., is_default=True)``) by
# tests/fastpaths/test_turn_reads.py.
_DEFAULT_PERSONA_SQL = f"""
    SELECT id, name, description FROM {Persona._meta.db_table}
    WHERE player_id = %s AND is_default
"""


def persona_for(conversation: Conversation) -> ActivePersona:
    """The conversation's persona, else its player's default one, else a plain persona
    named after the player (display name, else external id)."""
    chosen = conversation.persona
    if chosen is not None:
        return ActivePersona(chosen.name, chosen.description, "conversation", str(chosen.pk))
    with prepared(_DEFAULT_PERSONA_SQL, [conversation.player_id]) as cursor:  # one at most
        row = cursor.fetchone()
    if row is not None:
        return ActivePersona(row[1], row[2], "default", str(row[0]))
    player = conversation.player
    return ActivePersona(player.display_name or player.external_id, "", "player")


def player_personas(tenant, player):
    """The player's personas, the default first, without avatar bytes."""
    return without_avatars(scoped(Persona, tenant).filter(player=player)).order_by(
        "-is_default", "name", "created_at"
    )


def row_count(model, tenant, field: str):
    """How many of the tenant's ``model`` rows point at the outer row through ``field``, as
    an annotation (0 when none): a correlated count, not a join that multiplies rows."""
    counts = (
        scoped(model, tenant)
        .filter(**{field: OuterRef("pk")})
        .order_by()
        .values(field)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))


def player_sessions(tenant, player) -> list[str]:
    """The message store's session ids of the player's conversations."""
    rows = Conversation.objects.filter(tenant=tenant, player=player).values_list("pk", flat=True)
    return [str(pk) for pk in rows]


# What a search box matches, per list: the fields that tell one row from another.
CHARACTER_SEARCH = ("name", "creator", "tags", "character_version")
PLAYER_SEARCH = ("external_id", "display_name")
MODEL_CONFIG_SEARCH = ("name", "model", "provider", "base_url")
MAX_SEARCH_WORDS = 8


def matching(rows, query: str | None, fields: tuple[str, ...]):
    """``rows`` where every word of ``query`` is in one of ``fields`` (case-insensitive);
    all of them for an empty query. Lists of hundreds (characters, players, model configs)
    are searched in the database, before paging."""
    for word in (query or "").split()[:MAX_SEARCH_WORDS]:
        condition = Q()
        for name in fields:
            condition |= Q(**{f"{name}__icontains": word})
        rows = rows.filter(condition)
    return rows


def player_list(tenant, query: str | None = None):
    """Players with how many personas and conversations each has, newest first."""
    return (
        matching(scoped(Player, tenant), query, PLAYER_SEARCH)
        .annotate(
            persona_count=row_count(Persona, tenant, "player"),
            conversation_count=row_count(Conversation, tenant, "player"),
        )
        .order_by("-created_at", "-pk")
    )


def character_list(tenant, query: str | None = None):
    """Characters with their default config and how many conversations use them."""
    return (
        without_avatars(matching(scoped(Character, tenant), query, CHARACTER_SEARCH))
        .select_related("model_config")
        .annotate(conversation_count=row_count(Conversation, tenant, "character"))
        .order_by("name", "created_at")
    )


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


@dataclass(frozen=True)
class ConfigRow:
    """A config as the list shows it; the key's presence, never its value."""

    config: ModelConfig
    key_status: str  # "not_needed" | "set" | "missing"


def api_key_status(config: ModelConfig) -> str:
    if not config.api_key_env:
        return "not_needed"
    return "set" if os.environ.get(config.api_key_env) else "missing"


def model_config_rows(tenant, query: str | None = None) -> list[ConfigRow]:
    configs = matching(scoped(ModelConfig, tenant), query, MODEL_CONFIG_SEARCH)
    configs = configs.order_by("-is_default", "name")
    return [ConfigRow(c, api_key_status(c)) for c in configs]


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


def starter_character(tenant) -> Character | None:
    """The character the dashboard's getting-started list offers to chat with: the demo
    one (tagged ``demo``), else the first one made."""
    rows = without_avatars(scoped(Character, tenant)).order_by("created_at")
    return rows.filter(tags__contains=["demo"]).first() or rows.first()


def scenario_for(conversation: Conversation) -> Scenario | None:
    """The scenario the conversation runs: its own, else its character's default, else none
    (the same precedence as model configs; a scenario of another tenant is none). The one
    scenario rule: the chat turn's one-statement read (``turns/reads.py``) is pinned to it
    by tests/fastpaths/test_turn_reads.py."""
    ids = (conversation.scenario_id, conversation.character.default_scenario_id)
    for scenario_id in ids:
        if scenario_id is not None:
            found = Scenario.objects.filter(
                tenant_id=conversation.tenant_id, pk=scenario_id
            ).first()
            if found is not None:
                return found
    return None


# Parsed scenario configs, by scenario and part, with the stored JSON they were parsed
# from: a turn's capabilities each ask for them, and validating ``agenticV2`` costs more
# than comparing it with what was parsed last. The models are frozen, so sharing is safe.
_PARSED: dict[tuple, tuple] = {}
_PARSED_MAX = 2048


def _parsed(scenario: Scenario, part: str, raw: object, parse):
    key = (scenario.pk, part)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] == raw:
        return hit[1]
    value = parse()
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[key] = (copy.deepcopy(raw), value)
    return value


def _routed(scenario: Scenario) -> ScenarioConfig:
    raw = {"agenticV2": scenario.agentic_v2, "storyV1": scenario.story_v1}
    return _parsed(
        scenario, "routed", raw, lambda: ScenarioConfig.model_validate(raw, strict=False)
    )


def agentic_config(scenario: Scenario | None) -> AgenticV2 | None:
    """The scenario's Agent V2 config when its turns run Agent V2 (``ScenarioConfig.route``:
    on, and Story, which wins, not on); else None. A stored config that no longer validates
    raises ``ValidationError``."""
    if scenario is None or not scenario.agentic_v2:
        return None
    config = _routed(scenario)
    return config.agenticV2 if config.route == "agentic_v2" else None


def story_config(scenario: Scenario | None) -> StoryV1 | None:
    """The scenario's ``storyV1`` when its turns run Story (on; it wins over Agent V2);
    else None."""
    if scenario is None or not scenario.story_v1:
        return None
    config = _routed(scenario)
    return config.storyV1 if config.route == "story" else None


def compact_config(scenario: Scenario | None) -> Compact | None:
    """The scenario's ``compact`` when it is on; else None."""
    if scenario is None or not scenario.compact:
        return None
    raw = scenario.compact
    config = _parsed(scenario, "compact", raw, lambda: Compact.model_validate(raw, strict=False))
    return config if config.enabled else None


def auto_reply_config(scenario: Scenario | None) -> AgenticV2 | None:
    """The scenario's Agent V2 config when it is on and names an ``autoReply`` model config
    (what auto-reply suggestions need); else None."""
    if scenario is None or not scenario.agentic_v2:
        return None
    config = AgenticV2.model_validate(scenario.agentic_v2, strict=False)
    return config if config.enabled and config.modelConfigs.autoReply else None


def model_configs_by_ref(tenant_id, refs) -> dict[str, ModelConfig]:
    """The tenant's model configs named by ``refs`` (ids or names, as a scenario names
    them), each under the ref that named it, with their presets, in one query."""
    wanted = {ref for ref in refs if ref}
    if not wanted:
        return {}
    ids = [ref for ref in wanted if is_uuid(ref)]
    rows = ModelConfig.objects.filter(tenant_id=tenant_id).select_related("preset")
    found: dict[str, ModelConfig] = {}
    for row in rows.filter(Q(pk__in=ids) | Q(name__in=wanted)):
        if str(row.pk) in wanted:
            found[str(row.pk)] = row
        found.setdefault(row.name, row)
    return found
