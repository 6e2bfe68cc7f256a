"""The orchestrator's forced rules (``roleplay.agentic.engine.forced``), pure: the first turn, a
new person's name in English, Chinese and Japanese (and the words that are not names), the
names that are never new, and the director offered whenever a specialist is forced."""

from __future__ import annotations

import pytest

from roleplay.agentic.engine.forced import forced_tools, person_names
from roleplay.scenarios.config import TOOLS

ALL = list(TOOLS)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Captain Reyes waits by the door.", ["Reyes"]),
        ("I met Tom at the docks with Mr. Hale.", ["Hale", "Tom"]),
        ("Ask Dr. Chen about it.", ["Chen"]),
        ("The rain falls. Yesterday Tom left.", ["Tom"]),
        ("Hello Mira, where is Anna?", ["Mira", "Anna"]),
        ("王先生在门口等你。", ["王先生"]),
        ("老张和小李来了。", ["老张", "小李"]),
        ("他叫张三，是个猎人。", ["张三"]),
        ("李老师说：陈姑娘到了", ["李老师", "陈姑娘"]),
        ("田中さんとユキちゃんが来た。", ["田中", "ユキ"]),
    ],
)
def test_names_are_found(text, names):
    assert sorted(person_names(text)) == sorted(names)


@pytest.mark.parametrize(
    "text",
    [
        "On Monday I saw God.",
        "We walked. We talked. The sea was calm.",
        "Yes! Okay, thanks.",
        "我们打开门，张开双臂。",
        "小心！老板来了。",
        "今天天气很好。",
        "",
    ],
)
def test_words_that_are_not_names(text):
    assert person_names(text) == []


def _forced(**kwargs):
    defaults = dict(first_turn=False, recent=[], query="", old_state="", known=(), enabled=ALL)
    return forced_tools(**{**defaults, **kwargs})


def test_the_first_turn_adds_the_npc_judge_and_the_scene_director():
    forced = _forced(first_turn=True)
    assert forced.tools == ("judge_npc", "direct_scene") and forced.force_director
    only = _forced(first_turn=True, enabled=["direct_scene"])
    assert only.tools == ("direct_scene",) and not only.force_director  # no director enabled
    assert _forced(first_turn=True, enabled=[]).tools == ()


def test_a_new_name_adds_the_npc_judge_once():
    forced = _forced(query="I hand the key to Captain Reyes.")
    assert forced.tools == ("judge_npc",) and forced.names == ("Reyes",)
    assert forced.force_director
    both = _forced(first_turn=True, query="Captain Reyes nods.")
    assert both.tools == ("judge_npc", "direct_scene")


def test_known_names_and_names_in_the_state_are_not_new():
    state = "[Agentic RP State]\nRelationships and pronoun ownership: Captain Reyes owes Mira."
    assert _forced(query="Captain Reyes nods.", old_state=state).tools == ()
    assert _forced(query="Mira smiles at Ann.", known=("Mira", "Ann")).tools == ()
    assert _forced(query="王先生来了。", old_state="王先生是房东。").tools == ()
    assert _forced(query="王先生来了。").tools == ("judge_npc",)


def test_only_the_last_four_messages_count():
    recent = ["Captain Reyes left long ago.", "a", "b", "c", "d"]
    assert _forced(recent=recent).tools == ()
    assert _forced(recent=recent[:4]).names == ("Reyes",)
