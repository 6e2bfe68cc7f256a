"""The runtime's services hold their rules for callers without a form or serializer
(commands, seed data): field validators, rules across fields, tenants, unique names."""

from __future__ import annotations

import pytest

from roleplay.characters.services import characters
from roleplay.conversations.services import conversations
from roleplay.errors import Duplicate, FieldErrors, NotFound
from roleplay.llm.configs import services as model_configs
from roleplay.models import Character, ModelConfig
from roleplay.players.services import players

pytestmark = pytest.mark.django_db

LOCAL = {"provider": "llama_cpp", "model": "m", "context_limit": 2048, "max_output_tokens": 64}


def _field_errors(call, *args, **kwargs) -> dict[str, list[str]]:
    with pytest.raises(FieldErrors) as caught:
        call(*args, **kwargs)
    assert caught.value.code == "validation_error" and caught.value.kind == "bad_request"
    return caught.value.by_field


@pytest.mark.parametrize(
    "fields, field",
    [
        ({**LOCAL, "provider": "openai_compatible"}, "base_url"),
        ({**LOCAL, "max_output_tokens": 2048}, "max_output_tokens"),
        ({**LOCAL, "api_key_env": "sk-live-7f3a9c1e5b2d4f6a8c0e2b4d"}, "api_key_env"),
        ({**LOCAL, "extra": {"api_key": "x"}}, "extra"),
        ({**LOCAL, "temperature": 9}, "temperature"),
        ({**LOCAL, "provider": "anthropic"}, "provider"),
        ({**LOCAL, "model": "a\x00b"}, "model"),
        ({**LOCAL, "colour": "blue"}, "colour"),
    ],
)
def test_model_config_rules_hold_without_a_form(tenant, fields, field):
    assert field in _field_errors(model_configs.create_model_config, tenant, name="x", **fields)
    assert not ModelConfig.objects.exists()


def test_a_taken_name_is_a_duplicate_and_the_transaction_goes_on(tenant):
    model_configs.create_model_config(tenant, name="same", **LOCAL)
    with pytest.raises(Duplicate) as caught:
        model_configs.create_model_config(tenant, name="same", **LOCAL)
    assert (caught.value.code, caught.value.kind) == ("duplicate", "conflict")
    assert caught.value.details == {"field": "name"}
    assert ModelConfig.objects.filter(tenant=tenant).count() == 1  # the connection still works


def test_one_default_per_tenant_through_every_write(tenant, other_tenant):
    first = model_configs.create_model_config(tenant, name="a", is_default=True, **LOCAL)
    theirs = model_configs.create_model_config(other_tenant, name="a", is_default=True, **LOCAL)
    second = model_configs.create_model_config(tenant, name="b", is_default=True, **LOCAL)
    assert list(ModelConfig.objects.filter(tenant=tenant, is_default=True)) == [second]
    model_configs.update_model_config(first, is_default=True)
    assert list(ModelConfig.objects.filter(tenant=tenant, is_default=True)) == [first]
    model_configs.update_model_config(first, is_default=False)
    assert not ModelConfig.objects.filter(tenant=tenant, is_default=True).exists()
    theirs.refresh_from_db()
    assert theirs.is_default  # another tenant's default is never touched


def test_related_objects_must_be_the_tenants_own(tenant, other_tenant):
    theirs = model_configs.create_model_config(other_tenant, name="theirs", **LOCAL)
    assert _field_errors(characters.create_character, tenant, name="Mira", model_config=theirs) == {
        "model_config": ["not found"]
    }
    mine = characters.create_character(tenant, name="Mira")
    their_player = players.create_player(other_tenant, external_id="p")
    errors = _field_errors(
        conversations.start_conversation, tenant, character=mine, player=their_player
    )
    assert errors == {"player": ["not found"]}


def test_player_external_ids_are_unique_per_tenant(tenant, other_tenant):
    players.create_player(tenant, external_id="p-1")
    players.create_player(other_tenant, external_id="p-1")
    with pytest.raises(Duplicate) as caught:
        players.create_player(tenant, external_id="p-1")
    assert caught.value.details == {"field": "external_id"}


def test_updating_a_row_deleted_meanwhile_is_not_found(tenant):
    stale = characters.create_character(tenant, name="Mira")
    Character.objects.filter(pk=stale.pk).delete()  # another request, in between
    with pytest.raises(NotFound):
        characters.update_character(stale, name="Mira II")
