"""The turn's first read (``selectors.may_apply``): whether any script could run on a
conversation with this character: the tenant's global and preset scripts always count, the
character's own only once scripts are allowed on it, and another tenant's never."""

from __future__ import annotations

import pytest

from roleplay.models import Character, Preset
from roleplay.regex_scripts.selectors import may_apply
from roleplay.regex_scripts.services import create_script, set_allowed

pytestmark = pytest.mark.django_db

RULE = {"scriptName": "dots", "findRegex": "/!+/g", "replaceString": ".", "placement": [1, 2]}


def test_nothing_to_run_without_scripts(tenant, character):
    assert may_apply(tenant.id, character.id) is False


def test_the_characters_own_scripts_count_once_allowed(tenant, character):
    create_script(tenant, scope="character", character=character, script=RULE)
    assert may_apply(tenant.id, character.id) is False
    set_allowed(character, True)
    assert may_apply(tenant.id, character.id) is True
    other = Character.objects.create(tenant=tenant, name="Other", allow_regex=True)
    assert may_apply(tenant.id, other.id) is False  # scripts of another character


@pytest.mark.parametrize("scope", ["global", "preset"])
def test_the_tenants_shared_scripts_count_for_every_character(tenant, character, scope):
    preset = Preset.objects.create(tenant=tenant, name="P") if scope == "preset" else None
    create_script(tenant, scope=scope, preset=preset, script=RULE)
    assert may_apply(tenant.id, character.id) is True


def test_another_tenants_scripts_never_count(tenant, other_tenant, character):
    create_script(other_tenant, scope="global", script=RULE)
    stranger = Character.objects.create(tenant=other_tenant, name="Stranger", allow_regex=True)
    create_script(other_tenant, scope="character", character=stranger, script=RULE)
    assert may_apply(tenant.id, character.id) is False
    assert may_apply(tenant.id, stranger.id) is False
