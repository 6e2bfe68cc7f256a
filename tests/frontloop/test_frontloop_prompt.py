"""The controller's prompt, its skills list and the ids of its tool calls."""

from __future__ import annotations

import pytest

from roleplay.frontloop.engine.image_prompt import ASPECTS, CAMERAS, parse_block
from roleplay.frontloop.engine.prompt import (
    DEFAULT_IMAGE_PROMPT_PRODUCER_PROMPT,
    FRONT_CONTROLLER_PROMPT,
    FRONT_CONTROLLER_ROLE,
    call_id,
    controller_system,
    step_messages,
)
from roleplay.frontloop.engine.skills import Skill


def test_the_default_prompt_says_what_the_seed_asks():
    assert FRONT_CONTROLLER_ROLE == "front_controller"
    text = FRONT_CONTROLLER_PROMPT
    assert "through the functions" in text
    assert "never write any text the player sees" in text
    assert "read its result before choosing the next one" in text
    assert "Never call `over` before at least one" in text


def test_the_producer_prompt_documents_the_block_it_asks_for():
    text = DEFAULT_IMAGE_PROMPT_PRODUCER_PROMPT
    assert all(camera in text for camera in CAMERAS)
    assert all(aspect in text for aspect in ASPECTS)
    example = text[text.index("<image_prompt") : text.index("</image_prompt>") + 15]
    assert parse_block(example).camera == "close-up"


def test_skills_follow_the_prompt():
    assert controller_system("P", []) == "P"
    system = controller_system("P\n", [Skill("a"), Skill("b", (), "Use for pictures.")])
    assert system == "P\n\nSkills you may use:\n- a\n- b: Use for pictures."


@pytest.mark.parametrize(
    ("raw", "ident"),
    [
        ("call_1", "call_1"),
        ("a-B_9", "a-B_9"),
        ("", "front_3"),
        (None, "front_3"),
        ("a b", "front_3"),
        ("x" * 65, "front_3"),
        ("x" * 64, "x" * 64),
        ("\x00", "front_3"),
        (7, "front_3"),
    ],
)
def test_call_ids(raw, ident):
    assert call_id(raw, 3) == ident


def test_step_messages_pair_the_call_and_its_result():
    call, result = step_messages("c1", "over", {}, {"tool": "over", "ok": True})
    assert call["tool_calls"][0]["id"] == result["tool_call_id"] == "c1"
    assert call["content"] is None and result["role"] == "tool"
