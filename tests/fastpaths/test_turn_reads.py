"""The chat turn's SQL reads equal the ORM reads they replace (DESIGN: a fast path is pinned
to its slow path by a test).

Covered: the conversation with its related rows and the model config that applies
(``roleplay.turns.reads``), the player's default persona (``persona_for``), and the message
store's history lines and chat message count (``memory.selectors``).
"""

from __future__ import annotations

import pytest
from django.forms.models import model_to_dict

from console.models import Player
from memory import selectors as message_reads
from memory.models import Message, SessionFork
from roleplay.llm.gateway import resolve_config
from roleplay.models import Character, Conversation, ModelConfig, Persona, Preset
from roleplay.players.selectors import ActivePersona, persona_for, persona_from
from roleplay.scenarios.selectors import scenario_for
from roleplay.turns.reads import turn_conversation

pytestmark = pytest.mark.django_db

CONFIG = {"provider": "openai_compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"}


def _orm(conversation_id):
    conversation = Conversation.objects.select_related(
        "tenant", "character", "player", "persona"
    ).get(pk=conversation_id)
    config = resolve_config(
        conversation.tenant, conversation=conversation, character=conversation.character
    )
    return conversation, config


def _fields(instance, exclude=()):
    if instance is None:
        return None
    values = model_to_dict(instance, exclude=exclude)
    return {k: v for k, v in values.items() if k not in exclude}


def assert_same_read(conversation_id):
    read = turn_conversation(conversation_id)
    fast, fast_config, fast_scenario = read.conversation, read.config, read.scenario
    slow, slow_config = _orm(conversation_id)
    assert _fields(fast) == _fields(slow)
    assert fast.tenant == slow.tenant and fast.tenant.name == slow.tenant.name
    assert _fields(fast.character, ("avatar", "extensions")) == _fields(
        slow.character, ("avatar", "extensions")
    )
    assert _fields(fast.player) == _fields(slow.player)
    assert _fields(fast.persona, ("avatar",)) == _fields(slow.persona, ("avatar",))
    assert _fields(fast_config) == _fields(slow_config)
    assert _fields(fast_scenario) == _fields(scenario_for(slow))
    if slow_config is not None and slow_config.preset_id is not None:
        preset = slow_config.preset if slow_config.preset.tenant_id == slow.tenant_id else None
        assert _fields(fast_config.preset, ("prompts",)) == _fields(preset, ("prompts",))
    # No query is left to make for what the turn reads next.
    for name in ("tenant", "character", "player", "persona"):
        assert type(fast).__dict__[name].is_cached(fast)
    return fast, fast_config


def _config(tenant, name, **extra):
    return ModelConfig.objects.create(tenant=tenant, name=name, **CONFIG, **extra)


def test_tenant_default_config_and_no_persona(conversation, model_config):
    fast, config = assert_same_read(conversation.pk)
    assert config.pk == model_config.pk and fast.persona is None


def test_the_conversations_config_beats_the_characters(tenant, conversation, character):
    preset = Preset.objects.create(tenant=tenant, name="p", prompts=[])
    own = _config(tenant, "own", preset=preset)
    character.model_config = _config(tenant, "char")
    character.save()
    conversation.model_config = own
    conversation.save()
    _, config = assert_same_read(conversation.pk)
    assert config.pk == own.pk
    assert ModelConfig.preset.is_cached(config) and config.preset.pk == preset.pk


def test_the_characters_config_when_the_conversation_has_none(tenant, conversation, character):
    character.model_config = _config(tenant, "char", temperature=0.3, extra={"seed": 4})
    character.save()
    _, config = assert_same_read(conversation.pk)
    assert config.name == "char" and config.extra == {"seed": 4}


def test_another_tenants_config_or_preset_is_none(tenant, other_tenant, conversation):
    foreign_preset = Preset.objects.create(tenant=other_tenant, name="f", prompts=[])
    conversation.model_config = _config(other_tenant, "foreign")
    conversation.save()
    _, config = assert_same_read(conversation.pk)
    assert config is None
    own = _config(tenant, "own", preset=foreign_preset)
    conversation.model_config = own
    conversation.save()
    _, config = assert_same_read(conversation.pk)
    assert config.pk == own.pk and config.preset is None


def test_no_config_at_all(tenant, player, character):
    conversation = Conversation.objects.create(tenant=tenant, player=player, character=character)
    _, config = assert_same_read(conversation.pk)
    assert config is None


def test_a_chosen_persona_and_json_fields(tenant, conversation, player, character):
    persona = Persona.objects.create(tenant=tenant, player=player, name="Rin", description="d")
    character.alternate_greetings = ["Hi", "Yo"]
    character.save()
    conversation.persona = persona
    conversation.author_note = {"content": "note", "depth": 2}
    conversation.save()
    fast, _ = assert_same_read(conversation.pk)
    assert fast.persona.name == "Rin" and fast.author_note["depth"] == 2
    assert fast.character.alternate_greetings == ["Hi", "Yo"]
    # Deferred, not lost: reading one costs a query and gives the stored value.
    assert fast.character.extensions == Character.objects.get(pk=character.pk).extensions


def test_the_scenario_is_the_conversations_else_the_characters(
    tenant, other_tenant, conversation, character, model_config
):
    from roleplay.scenarios.services import create_scenario

    assert_same_read(conversation.pk)  # none at all
    default = create_scenario(tenant, name="default", model_config=model_config)
    Character.objects.filter(pk=character.pk).update(default_scenario=default)
    assert_same_read(conversation.pk)
    own = create_scenario(tenant, name="own", model_config=model_config)
    Conversation.objects.filter(pk=conversation.pk).update(scenario=own)
    assert_same_read(conversation.pk)
    assert turn_conversation(conversation.pk)[2] == own
    foreign_config = ModelConfig.objects.create(
        tenant=other_tenant, name="f", provider="llama_cpp", model="m"
    )
    foreign = create_scenario(other_tenant, name="foreign", model_config=foreign_config)
    Conversation.objects.filter(pk=conversation.pk).update(scenario=foreign)  # never by a service
    assert_same_read(conversation.pk)
    assert turn_conversation(conversation.pk)[2] == default


def test_a_missing_conversation_is_does_not_exist(db):
    import uuid

    with pytest.raises(Conversation.DoesNotExist):
        turn_conversation(uuid.uuid4())


def _both_personas(conversation) -> ActivePersona:
    """``persona_for``'s answer, checked equal to the one the turn's first read gives."""
    read = turn_conversation(conversation.pk)
    folded = persona_from(read.conversation, read.default_persona)
    assert folded == persona_for(conversation)
    return folded


def test_persona_for_reads_the_players_default(tenant, conversation, player):
    assert _both_personas(conversation) == ActivePersona("Ann", "", "player")
    other = Player.objects.create(tenant=tenant, external_id="p-2")
    Persona.objects.create(tenant=tenant, player=other, name="Not mine", is_default=True)
    Persona.objects.create(tenant=tenant, player=player, name="Side", is_default=False)
    assert _both_personas(conversation).source == "player"
    default = Persona.objects.create(
        tenant=tenant, player=player, name="Main", description="tall", is_default=True
    )
    slow = Persona.objects.filter(player_id=player.pk, is_default=True).get()
    assert slow.pk == default.pk
    assert _both_personas(conversation) == ActivePersona("Main", "tall", "default", str(default.pk))
    chosen = Persona.objects.create(tenant=tenant, player=player, name="Rin", description="d")
    conversation.persona = chosen
    conversation.save()
    assert turn_conversation(conversation.pk).default_persona is None  # not read: not needed
    assert _both_personas(conversation) == ActivePersona("Rin", "d", "conversation", str(chosen.pk))


def _put(tenant, session, ts, role="user", archived=False):
    return Message.objects.create(
        tenant=tenant, session_id=session, role=role, content=f"{role}@{ts}", ts=ts,
        archived=archived, edited=ts % 3 == 0,
    )  # fmt: skip


def test_history_lines_equal_the_orm_history(tenant, other_tenant):
    roles = ("user", "assistant", "system", "tool")
    for ts in range(1, 40):
        _put(tenant, "s", ts, roles[ts % 4], archived=ts % 7 == 0)
    _put(other_tenant, "s", 100)
    _put(tenant, "t", 101)
    for limit in (0, 1, 10, 50, 200):
        slow = [
            (m.id, m.ts, m.role, m.content, m.edited)
            for m in message_reads.get_history(tenant, "s", limit)
        ]
        assert message_reads.get_history_lines(tenant, "s", limit) == slow
    assert message_reads.get_history_lines(tenant, "nobody", 10) == []


def test_history_speakers_equal_the_orm_history(tenant, other_tenant):
    for ts in range(1, 30):
        message = _put(tenant, "s", ts, ("user", "assistant")[ts % 2], archived=ts % 7 == 0)
        if ts % 4 == 1:
            message.metadata = {"speaker": {"id": f"c{ts}", "name": f"N{ts}"}}
            message.save()
    _put(other_tenant, "s", 100)
    for limit in (0, 1, 10, 50):
        slow = [
            (m.id, m.role, m.content, *_speaker(m))
            for m in message_reads.get_history(tenant, "s", limit)
        ]
        assert message_reads.get_history_speakers(tenant.pk, "s", limit) == slow
    assert message_reads.get_history_speakers(tenant.pk, "nobody", 10) == []
    # a branch: the parent's speakers up to the fork point, then its own
    SessionFork.objects.create(tenant=tenant, session_id="f", ancestors=[["s", 21]])
    for ts in range(40, 44):
        _put(tenant, "f", ts, ("user", "assistant")[ts % 2])
    for limit in (1, 5, 50):
        slow = [
            (m.id, m.role, m.content, *_speaker(m))
            for m in message_reads.get_history(tenant, "f", limit)
        ]
        assert message_reads.get_history_speakers(tenant.pk, "f", limit) == slow


def _speaker(message):
    speaker = message.metadata.get("speaker")
    return (speaker["id"], speaker["name"]) if speaker else (None, None)


def test_chat_message_count_equals_the_orm_count(tenant, other_tenant):
    roles = ("user", "assistant", "system", "tool")
    for ts in range(1, 30):
        _put(tenant, "s", ts, roles[ts % 4], archived=ts % 5 == 0)
    _put(other_tenant, "s", 100)
    slow = Message.objects.filter(
        tenant=tenant, session_id="s", role__in=["user", "assistant"]
    ).count()
    assert message_reads.count_chat_messages(tenant, "s") == slow == 15
    assert message_reads.count_chat_messages(tenant, "none") == 0


def test_checks_replies_equals_the_policy(tenant, other_tenant, conversation):
    """The first read's moderation flag is ``selectors.policy``'s ``check_reply``."""
    from roleplay.models import ModerationPolicy
    from roleplay.moderation.selectors import policy

    def both() -> bool:
        row = policy(tenant.pk)
        slow = bool(row and row.check_reply)
        assert turn_conversation(conversation.pk).checks_replies is slow
        return slow

    assert both() is False  # no policy row
    ModerationPolicy.objects.create(tenant=other_tenant, enabled=True, check_reply=True)
    assert both() is False  # another tenant's
    row = ModerationPolicy.objects.create(tenant=tenant, enabled=False, check_reply=True)
    assert both() is False  # switched off
    row.enabled = True
    row.save()
    assert both() is True
    row.check_reply = False
    row.save()
    assert both() is False


def test_admission_equals_the_orm_rules(tenant, other_tenant, player):
    """``moderation.selectors.admission``'s one statement finds the sanction
    ``sanction_of`` finds (a ban first, then the newest; none lifted or run out) and the
    policy's ``check_input``."""
    from datetime import timedelta

    from django.utils import timezone

    from roleplay.models import ModerationPolicy, Sanction
    from roleplay.moderation.selectors import admission, policy, sanction_of

    def both():
        sanction, checks_input = admission(player.pk, tenant.pk)
        row = policy(tenant.pk)
        assert checks_input is bool(row and row.check_input)
        slow = sanction_of(player.pk)
        assert (sanction and sanction.pk) == (slow and slow.pk)
        return sanction

    assert both() is None
    now = timezone.now()
    Sanction.objects.create(tenant=tenant, player=player, kind="suspend", reason="old",
                            until=now - timedelta(hours=1))  # fmt: skip
    assert both() is None  # ran out
    Sanction.objects.create(tenant=tenant, player=player, kind="ban", reason="lifted",
                            lifted_at=now)  # fmt: skip
    assert both() is None
    live = Sanction.objects.create(tenant=tenant, player=player, kind="suspend", reason="now",
                                   until=now + timedelta(hours=1))  # fmt: skip
    assert both().pk == live.pk
    ban = Sanction.objects.create(tenant=tenant, player=player, kind="ban", reason="ban")
    Sanction.objects.create(tenant=tenant, player=player, kind="suspend", reason="newer",
                            until=now + timedelta(hours=2))  # fmt: skip
    assert both().pk == ban.pk  # a ban before a newer suspension
    ModerationPolicy.objects.create(tenant=tenant, enabled=True, check_input=True)
    assert both().pk == ban.pk
