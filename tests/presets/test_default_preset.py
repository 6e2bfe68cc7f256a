"""The shipped default preset: valid, complete, and today's Actor prompt in its Actor list."""

from __future__ import annotations

import pytest

from roleplay.prompting import presets as p
from roleplay.prompting.default_preset import (
    MAIN_PROMPT,
    default_preset,
    default_prompt_data,
    role_templates,
)
from roleplay.prompting.macros import MacroContext, expand_macros, referenced_variables
from roleplay.prompting.presets import LoadedPreset, validate_prompts

# The variables each role template may use: the module docstring's table.
TEMPLATE_VARIABLES = {
    "auto_reply": {"language", "characterName"},
    "orchestrator": {"characterName", "enabledTools"},
    "director": {"characterName", "maxStateChars"},
    "compactor": {"characterName", "maxSummaryTokens"},
    "story_writer": {"characterName"},
    "front_controller": {"characterName"},
    "dio_compiler": {"characterName"},
    **{name: {"characterName"} for name in p.SPECIALISTS},
}


def test_the_default_preset_keeps_every_rule():
    assert p.validate_prompts(default_prompt_data())
    preset = default_preset()
    assert preset.is_default and preset.id is None


def test_it_has_every_named_prompt():
    preset = default_preset()
    found = preset.require(*p.NAMED_PROMPTS)
    assert set(found) == set(p.NAMED_PROMPTS)
    assert preset.named("roleplay").placed
    for name in p.ROLE_TEMPLATES:
        assert not found[name].placed and found[name].role == "system"
    assert preset.character_slot() == p.CharacterSlot("roleplay", "roleplay")


@pytest.mark.parametrize("name", p.ROLE_TEMPLATES)
def test_each_template_uses_only_its_documented_variables(name):
    text = role_templates()[name]
    used = set(referenced_variables(text))
    assert used and used <= TEMPLATE_VARIABLES[name]
    # Role templates name the character through a variable, not the Actor's card macros.
    expanded = expand_macros(text, MacroContext(variables={v: "X" for v in used}))
    assert expanded.unknown == () and expanded.missing_variables == ()


def test_the_actor_list_in_order():
    actor = [x.identifier for x in default_preset().actor_prompts()]
    assert actor == [
        "worldInfoBefore",
        "main",
        "roleplay",
        "charPersonality",
        "scenario",
        "personaDescription",
        "worldInfoAfter",
        "dialogueExamples",
        "chatHistory",
        "userInput",
        "turnContext",  # the cache-aware layout: per-turn blocks after the player's message
        "postHistoryInstructions",
    ]
    classic = LoadedPreset(tuple(validate_prompts(default_prompt_data("classic"))), name="c")
    assert classic.layout == "classic" and default_preset().layout == "cache_aware"
    assert [x.identifier for x in classic.actor_prompts()] == [
        i for i in actor if i != "turnContext"
    ]


def test_its_system_text_is_the_old_actor_prompt():
    """Expanded, blank prompts and empty content markers left out, the system prompts joined
    with blank lines: exactly what ``roleplay.actor`` wrote for a card with a description
    and example dialogues."""
    context = MacroContext(
        char="Mira",
        description="Keeper of the lighthouse.",
        mes_examples="<START>\nMira: Welcome.",
    )
    parts = []
    for prompt in default_preset().actor_prompts():
        if prompt.identifier in ("chatHistory", "userInput"):
            break
        field = p.MARKER_FIELDS.get(prompt.identifier)
        if prompt.is_marker and (field is None or not getattr(context, _attr(field))):
            continue
        text = expand_macros(prompt.content, context).text.strip()
        if text:
            parts.append(text)
    old = (
        "You are Mira, in a roleplay with the user. Stay in character.\n\n"
        "Keeper of the lighthouse.\n\nExample dialogue:\n<START>\nMira: Welcome."
    )
    assert "\n\n".join(parts) == old


def _attr(macro: str) -> str:
    return {"mesExamples": "mes_examples"}.get(macro, macro)


def test_the_card_override_targets_exist():
    preset = default_preset()
    assert preset.prompt("main").content == MAIN_PROMPT
    post = preset.prompt("postHistoryInstructions")
    assert post.content == "" and post.placed
    ids = [x.identifier for x in preset.actor_prompts()]
    assert ids.index("postHistoryInstructions") > ids.index("chatHistory")
