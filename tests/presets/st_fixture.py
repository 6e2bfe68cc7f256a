"""A SillyTavern chat-completion preset as users bring them: their default preset's prompts
and orders (``default/content/presets/openai/Default.json``), some sampler and format
settings, and what community presets add: custom prompts with UUID identifiers, one sent in
the chat at a depth, one limited to some generation types, one the order does not list."""

from __future__ import annotations

import copy

CUSTOM_RULES = "1f0c7a52-9a7e-4d1e-9a55-3a7c0c3e6b11"
CUSTOM_DEPTH = "b6d1e0b4-2f0e-4c52-8f3c-0d9a4b1c7e22"
CUSTOM_UNLISTED = "c2a3f9de-5b1a-4e77-a0c2-77e5f1d3a833"

_PROMPTS = [
    {
        "name": "Main Prompt",
        "system_prompt": True,
        "role": "system",
        "content": "Write {{char}}'s next reply in a fictional chat between {{char}} and {{user}}.",
        "identifier": "main",
    },
    {
        "name": "Auxiliary Prompt",
        "system_prompt": True,
        "role": "system",
        "content": "",
        "identifier": "nsfw",
    },
    {
        "identifier": "dialogueExamples",
        "name": "Chat Examples",
        "system_prompt": True,
        "marker": True,
    },
    {
        "name": "Post-History Instructions",
        "system_prompt": True,
        "role": "system",
        "content": "",
        "identifier": "jailbreak",
    },
    {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True},
    {
        "identifier": "worldInfoAfter",
        "name": "World Info (after)",
        "system_prompt": True,
        "marker": True,
    },
    {
        "identifier": "worldInfoBefore",
        "name": "World Info (before)",
        "system_prompt": True,
        "marker": True,
    },
    {
        "identifier": "enhanceDefinitions",
        "role": "system",
        "name": "Enhance Definitions",
        "content": "If you have more knowledge of {{char}}, add to the character's lore and "
        "personality to enhance them but keep the Character Sheet's definitions absolute.",
        "system_prompt": True,
        "marker": False,
    },
    {
        "identifier": "charDescription",
        "name": "Char Description",
        "system_prompt": True,
        "marker": True,
    },
    {
        "identifier": "charPersonality",
        "name": "Char Personality",
        "system_prompt": True,
        "marker": True,
    },
    {"identifier": "scenario", "name": "Scenario", "system_prompt": True, "marker": True},
    {
        "identifier": "personaDescription",
        "name": "Persona Description",
        "system_prompt": True,
        "marker": True,
    },
    {
        "identifier": CUSTOM_RULES,
        "system_prompt": False,
        "enabled": False,
        "marker": False,
        "name": "Writing rules",
        "role": "system",
        "content": "Stay in the present tense. Never speak for {{user}}.",
        "injection_position": 0,
        "injection_depth": 4,
        "injection_order": 100,
        "forbid_overrides": False,
    },
    {
        "identifier": CUSTOM_DEPTH,
        "system_prompt": False,
        "name": "Reminder",
        "role": "user",
        "content": "[Keep replies under 150 words.]",
        "injection_position": 1,
        "injection_depth": 2,
        "injection_order": 90,
        "injection_trigger": ["normal", "continue"],
        "forbid_overrides": False,
    },
    {
        "identifier": CUSTOM_UNLISTED,
        "system_prompt": False,
        "name": "Old jailbreak",
        "role": "system",
        "content": "Unused text.",
        "injection_position": 0,
        "injection_depth": 4,
        "forbid_overrides": False,
    },
]

# Their default preset's order (character 100000); the global order (100001) adds the
# persona and the custom prompts.
_DEFAULT_ORDER = (
    "main", "worldInfoBefore", "charDescription", "charPersonality", "scenario",
    "enhanceDefinitions", "nsfw", "worldInfoAfter", "dialogueExamples", "chatHistory", "jailbreak",
)  # fmt: skip


def _enabled(identifiers) -> list[tuple[str, bool]]:
    return [(i, i != "enhanceDefinitions") for i in identifiers]


_ORDER_100000 = _enabled(_DEFAULT_ORDER)
ORDER_100001 = _enabled(
    ["main", CUSTOM_RULES, "worldInfoBefore", "personaDescription", *_DEFAULT_ORDER[2:-1]]
    + [CUSTOM_DEPTH, "jailbreak"]
)

_SETTINGS = {
    "chat_completion_source": "openai",
    "openai_model": "gpt-4-turbo",
    "temperature": 0.9,
    "frequency_penalty": 0,
    "presence_penalty": 0,
    "top_p": 0.95,
    "top_k": 0,
    "openai_max_context": 16384,
    "openai_max_tokens": 400,
    "wrap_in_quotes": False,
    "names_behavior": 0,
    "impersonation_prompt": "[Write your next reply from the point of view of {{user}}.]",
    "new_chat_prompt": "[Start a new Chat]",
    "wi_format": "{0}",
    "scenario_format": "{{scenario}}",
    "personality_format": "[{{char}}'s personality: {{personality}}]",
    "stream_openai": True,
    "seed": -1,
    "n": 1,
}


def _order(character_id: int, entries: list[tuple[str, bool]]) -> dict:
    return {
        "character_id": character_id,
        "order": [{"identifier": i, "enabled": e} for i, e in entries],
    }


def st_preset() -> dict:
    """A fresh copy of the preset file."""
    orders = [_order(100000, _ORDER_100000), _order(100001, ORDER_100001)]
    return copy.deepcopy({**_SETTINGS, "prompts": _PROMPTS, "prompt_order": orders})


# The keys and types of their default preset's prompt objects, by kind.
DEFAULT_PROMPT_SHAPE = {
    "marker": {"identifier": str, "name": str, "system_prompt": bool, "marker": bool},
    "prompt": {"identifier": str, "name": str, "system_prompt": bool, "role": str, "content": str},
}
