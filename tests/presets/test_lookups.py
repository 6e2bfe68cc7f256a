"""Named-prompt lookups and the character slot: a missing or disabled prompt is a clear
configuration error naming the preset and the prompt."""

from __future__ import annotations

import pytest

from roleplay.prompting import presets as p
from roleplay.prompting.director_state import (
    DIRECTOR_STATE_HEADER,
    DIRECTOR_STATE_SECTIONS,
)

STATE = "\n".join([DIRECTOR_STATE_HEADER, *(f"{s}:" for s in DIRECTOR_STATE_SECTIONS)])


def loaded(*prompts: dict, name: str = "Mine") -> p.LoadedPreset:
    data = [
        *prompts,
        {"identifier": "chatHistory", "name": "h"},
        {"identifier": "userInput", "name": "u"},
    ]
    return p.LoadedPreset(tuple(p.validate_prompts(data)), name=name, id="abc", version=3)


def template(name: str, content: str = "x", **fields) -> dict:
    return {
        "identifier": name,
        "name": name,
        "content": content,
        "injection": {"position": "none"},
        **fields,
    }


def test_named_finds_a_prompt_by_name_not_identifier():
    preset = loaded(
        {
            "identifier": "t1",
            "name": "compactor",
            "content": "Sum up.",
            "injection": {"position": "none"},
        }
    )
    assert preset.named("compactor").identifier == "t1"
    assert preset.prompt("t1").name == "compactor"


def test_a_missing_named_prompt_names_the_preset_and_the_prompt():
    preset = loaded(name="Noir")
    with pytest.raises(p.NamedPromptMissing) as info:
        preset.named("director")
    error = info.value
    assert error.code == "named_prompt_missing" and error.kind == "invalid"
    assert error.details == {
        "preset": "Noir",
        "preset_id": "abc",
        "names": ["director"],
        "reason": "absent: director",
    }
    assert "Noir" in error.message and "director" in error.message


def test_a_disabled_named_prompt_is_missing_too():
    preset = loaded(template("director", "Keep:\n" + STATE, enabled=False))
    with pytest.raises(p.NamedPromptMissing) as info:
        preset.named("director")
    assert info.value.details["reason"] == "disabled: director"


def test_require_lists_every_missing_name_at_once():
    preset = loaded(
        template("specialist_judge_npc"), template("specialist_audit_knowledge", enabled=False)
    )
    with pytest.raises(p.NamedPromptMissing) as info:
        preset.require(*p.SPECIALISTS, p.DIRECTOR)
    missing = info.value.details["names"]
    assert set(missing) == {*p.SPECIALISTS, p.DIRECTOR} - {"specialist_judge_npc"}
    assert set(loaded(template("compactor")).require("compactor")) == {"compactor"}


def test_actor_prompts_are_the_enabled_placed_ones_in_order():
    preset = loaded(
        {"identifier": "a", "name": "a"},
        {"identifier": "b", "name": "b", "enabled": False},
        {"identifier": "c", "name": "c", "injection": {"position": "at_depth", "depth": 2}},
        template("compactor"),
    )
    assert [x.identifier for x in preset.actor_prompts()] == ["a", "c", "chatHistory", "userInput"]


def test_the_character_slot_follows_the_seed_rule():
    roleplay = loaded(
        {"identifier": "r", "name": "roleplay"},
        {"identifier": "s", "name": "s", "content": "{{getvar::systemPrompt}}"},
    )
    assert roleplay.character_slot() == p.CharacterSlot("r", "roleplay")
    placeholder = loaded({"identifier": "s", "name": "s", "content": "{{getvar::systemPrompt}}"})
    assert placeholder.character_slot() == p.CharacterSlot("s", "placeholder")
    for preset in (
        loaded({"identifier": "x", "name": "x"}),
        loaded({"identifier": "r", "name": "roleplay", "enabled": False}),
        loaded(
            {
                "identifier": "s",
                "name": "s",
                "content": "{{getvar::systemPrompt}}",
                "enabled": False,
            }
        ),
    ):
        with pytest.raises(p.NamedPromptMissing) as info:
            preset.character_slot()
        assert info.value.details["names"] == ["roleplay"]
