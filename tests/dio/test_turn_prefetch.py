"""Our own DIO's prompt in force is read inside the turn's first statement
(``roleplay.dio.reads`` through ``roleplay.turns.reads.turn_conversation``), pinned here to
the selectors' ORM read: the same version, the same identity rule, off is none, and a
scenario without internal DIO reads nothing."""

from __future__ import annotations

import dataclasses

import pytest

from console.models import Player
from roleplay.dio import selectors, services
from roleplay.dio.identity import identity_for
from roleplay.dio.models import VersionKind
from roleplay.dio.reads import NOT_READ, Prefetched
from roleplay.models import Conversation
from roleplay.turns.reads import turn_conversation
from tests.dio.turn_support import dio_scenario

pytestmark = pytest.mark.django_db


def _commit(conversation, expected: int, kind=VersionKind.COMPILED, text: str = ""):
    identity = identity_for(conversation)
    return services.commit_version(
        conversation, identity, expected=expected, kind=kind, compiled_prompt=text
    )


def _read(conversation) -> Prefetched:
    return turn_conversation(conversation.pk)[4]


def _orm(conversation):
    active = selectors.active_prompt(conversation.tenant_id, identity_for(conversation))
    return None if active is None else dataclasses.replace(active, changeset=[])


def test_the_turns_read_finds_what_the_selector_finds(tenant, conversation, model_config, llm):
    dio_scenario(tenant, conversation, model_config, llm)
    assert _read(conversation) == Prefetched(True, None)
    _commit(conversation, 0, text="You are Mira. Short sentences.")
    _commit(conversation, 1, text="You are Mira. Short sentences, no metaphors.")
    found = _read(conversation)
    assert found.read and found.active == _orm(conversation)
    assert found.active.version == 2 and found.active.compiled_prompt.endswith("metaphors.")
    _commit(conversation, 2, kind=VersionKind.OFF)
    assert _read(conversation) == Prefetched(True, None) and _orm(conversation) is None


def test_another_players_prompt_is_not_read(tenant, conversation, model_config, llm):
    scenario = dio_scenario(tenant, conversation, model_config, llm)
    other_player = Player.objects.create(tenant=tenant, external_id="someone-else")
    other = Conversation.objects.create(
        tenant=tenant, player=other_player, character=conversation.character, scenario=scenario
    )
    _commit(other, 0, text="Only for the other player.")
    assert _read(conversation) == Prefetched(True, None)
    assert _read(other).active.compiled_prompt == "Only for the other player."


def test_without_internal_dio_nothing_is_read(tenant, conversation, model_config, llm):
    assert _read(conversation) is NOT_READ or _read(conversation) == NOT_READ
    dio_scenario(tenant, conversation, model_config, llm, dio={"mode": "off"})
    _commit(conversation, 0, text="Stored, but DIO is off for the scenario.")
    assert _read(conversation) == NOT_READ
