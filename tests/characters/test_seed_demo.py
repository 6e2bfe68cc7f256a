"""The demo data shows the card fields and personas: Mira has a scenario, a personality and
an alternate greeting, the demo player a default persona; a second run changes nothing, and
an older demo Mira gets the fields she lacks."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from console.management.commands import seed_demo
from roleplay.models import Character, Persona

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def credentials(tmp_path, monkeypatch):
    monkeypatch.setattr(seed_demo, "CREDENTIALS", tmp_path / "demo-login.txt")


def run() -> None:
    call_command("seed_demo", stdout=io.StringIO())


def test_the_demo_has_a_full_character_and_a_persona():
    run()
    mira = Character.objects.get(name="Mira", tenant__name="demo")
    assert mira.personality and mira.scenario and len(mira.alternate_greetings) == 1
    persona = Persona.objects.get(player__tenant=mira.tenant)
    assert (persona.name, persona.is_default) == ("Traveller", True)
    run()
    assert Persona.objects.filter(player__tenant=mira.tenant).count() == 1
    assert Character.objects.get(pk=mira.pk).alternate_greetings == mira.alternate_greetings


def test_an_older_demo_character_gets_the_fields_it_lacks():
    run()
    Character.objects.filter(name="Mira").update(personality="", alternate_greetings=[])
    run()
    mira = Character.objects.get(name="Mira")
    assert mira.personality == seed_demo.DEMO_CARD["personality"]
    assert mira.alternate_greetings == seed_demo.DEMO_CARD["alternate_greetings"]
