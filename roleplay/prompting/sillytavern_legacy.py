"""SillyTavern chat-completion presets from before its prompt manager (spring 2023).

Those files have no ``prompts`` list: the three texts are settings (``main_prompt``,
``nsfw_prompt``, ``jailbreak_prompt``) with toggles beside them (``nsfw_toggle``,
``enhance_definitions``, ``nsfw_first``). SillyTavern still loads them by filling its default
prompts with those texts; :func:`upgrade` does the same, so the file then goes through the
ordinary import (:mod:`.sillytavern`) and its report. Pure.
"""

from __future__ import annotations

from typing import Any

TEXTS = {"main_prompt": "main", "nsfw_prompt": "nsfw", "jailbreak_prompt": "jailbreak"}
# The toggles the texts came with; read here, so not reported as ignored settings.
TOGGLES = ("nsfw_toggle", "enhance_definitions", "nsfw_first")
MARKERS = (
    ("worldInfoBefore", "World Info (before)"),
    ("charDescription", "Char Description"),
    ("charPersonality", "Char Personality"),
    ("scenario", "Scenario"),
    ("worldInfoAfter", "World Info (after)"),
    ("dialogueExamples", "Chat Examples"),
    ("chatHistory", "Chat History"),
)
NAMES = {
    "main": "Main Prompt",
    "nsfw": "Auxiliary Prompt",
    "jailbreak": "Post-History Instructions",
}
ENHANCE = (
    "If you have more knowledge of {{char}}, add to the character's lore and personality to "
    "enhance them but keep the Character Sheet's definitions absolute."
)


def is_legacy(data: Any) -> bool:
    """A preset object without ``prompts`` that carries at least one of the three texts."""
    return (
        isinstance(data, dict)
        and "prompts" not in data
        and any(isinstance(data.get(key), str) for key in TEXTS)
    )


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """The file as a prompt-manager preset: SillyTavern's default prompts holding the file's
    texts, in its default order (``nsfw_first`` puts the auxiliary prompt first); a toggle
    that is off leaves its prompt disabled."""
    prompts: list[dict[str, Any]] = []
    for key, identifier in TEXTS.items():
        text = data.get(key)
        prompts.append(
            {
                "identifier": identifier,
                "name": NAMES[identifier],
                "system_prompt": True,
                "role": "system",
                "content": text if isinstance(text, str) else "",
            }
        )
    prompts.append(
        {
            "identifier": "enhanceDefinitions",
            "name": "Enhance Definitions",
            "role": "system",
            "content": ENHANCE,
            "system_prompt": True,
            "marker": False,
        }  # fmt: skip
    )
    for identifier, name in MARKERS:
        prompts.append({"identifier": identifier, "name": name, "system_prompt": True})
        prompts[-1]["marker"] = True
    nsfw = ("nsfw", data.get("nsfw_toggle", True) is not False)
    order = [
        ("main", True),
        ("worldInfoBefore", True),
        ("charDescription", True),
        ("charPersonality", True),
        ("scenario", True),
        ("enhanceDefinitions", data.get("enhance_definitions") is True),
        ("worldInfoAfter", True),
        ("dialogueExamples", True),
        ("chatHistory", True),
        ("jailbreak", bool(str(data.get("jailbreak_prompt") or "").strip())),
    ]
    order.insert(0 if data.get("nsfw_first") is True else 6, nsfw)
    rest = {k: v for k, v in data.items() if k not in TEXTS and k not in TOGGLES}
    return {
        **rest,
        "prompts": prompts,
        "prompt_order": [
            {"character_id": 100000, "order": [{"identifier": i, "enabled": e} for i, e in order]}
        ],
    }
