"""The speakers' own names leave a question before it is searched (``engine.speakers``):
the rule on small fixtures, the names the runtime answers, and a recall over real
PostgreSQL where a greeting naming the player no longer outranks what was asked about."""

from __future__ import annotations

import pytest

from memory.engine import speakers
from memory.recall.search import RecallQuery, recall, speaker_names
from roleplay.models import Character, Conversation, Persona
from tests.memory.test_recall_multihop import _filler_days, _say


class TestWithout:
    def test_a_speakers_name_leaves_the_question_and_a_possessive_becomes_theirs(self):
        names = ["Maya", "Mira"]
        assert speakers.without("Where has Maya travelled lately?", names) == (
            "Where has travelled lately?"
        )
        assert speakers.without("What is Maya's brother's dog called?", names) == (
            "What is their brother's dog called?"
        )

    def test_other_names_and_words_containing_a_name_stay(self):
        assert speakers.without("Did Mayan food please Priya?", ["Maya"]) == (
            "Did Mayan food please Priya?"
        )
        assert speakers.without("Did Rose water the rose bushes?", ["Rose"]) == (
            "Did water the rose bushes?"
        )

    def test_a_name_of_several_words_goes_whole_and_by_its_capitalised_parts(self):
        assert speakers.forms(["Maya Chen", "The Doctor"]) == [
            "The Doctor", "Maya Chen", "Doctor", "Chen", "Maya",
        ]  # fmt: skip
        assert speakers.without("What did Maya Chen and the doctor say?", ["Maya Chen"]) == (
            "What did and the doctor say?"
        )

    def test_a_cjk_name_goes_wherever_it_stands(self):
        assert speakers.without("王思琪的姐姐搬去哪个城市了", ["王思琪"]) == "的姐姐搬去哪个城市了"

    def test_a_question_only_about_the_name_is_kept(self):
        assert speakers.without("What about Maya?", ["Maya"]) == "What about Maya?"
        assert speakers.without("Where is Priya?", []) == "Where is Priya?"


@pytest.mark.django_db(transaction=True)
def test_the_runtime_names_the_player_their_personas_and_characters(tenant, player, character):
    other = Character.objects.create(tenant=tenant, name="Captain Reyes")
    Conversation.objects.create(tenant=tenant, player=player, character=character)
    Conversation.objects.create(tenant=tenant, player=player, character=other)
    Persona.objects.create(tenant=tenant, player=player, name="Annie")
    every = speaker_names(tenant, player, RecallQuery("q"))
    assert sorted(every) == ["Ann", "Annie", "Captain Reyes", "Mira"]
    only = speaker_names(tenant, player, RecallQuery("q", character_id=str(other.pk)))
    assert sorted(only) == ["Ann", "Annie", "Captain Reyes"]


@pytest.mark.django_db(transaction=True)
def test_a_greeting_naming_the_player_does_not_outrank_the_evidence(tenant, player, character):
    days = _filler_days(6)
    for n in range(6):
        days[n].insert(0, f"Ann! Good to hear from you, how was day {n}?")
    days[3].append("Back from Lisbon, the pastries there were unreal.")
    _say(tenant, player, character, days)
    # With her name in it, the question's five best were the five greetings.
    found = recall(tenant, player, RecallQuery("Which city did Ann visit?", k=1))
    assert "Lisbon" in found["items"][0]["text"]
