"""The controller's default prompt, the image-prompt producer's default prompt, and the
controller's messages (seed 002 lines 470 and 1254).

The seed's controller "runs one roleplay turn through functions, never writes the visible
text itself, and reads each actual tool result before choosing the next step instead of
calling tools in a fixed order". An operator's own text is the ``front_controller`` role
prompt of the controller config's preset; :data:`FRONT_CONTROLLER_PROMPT` is the text a new
preset starts from. The skills are listed after the prompt, so the controller knows what each
is for.

The messages are OpenAI tool-calling shapes: system = the prompt (and skills), user = the
player's input, then per executed step one assistant message with its single tool call and
one ``tool`` message with the receipt (JSON text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from .skills import Skill
from .text import clip

FRONT_CONTROLLER_ROLE = "front_controller"
MAX_PLAYER_INPUT_CHARS = 100_000

FRONT_CONTROLLER_PROMPT = """\
You control one roleplay reply of {{getvar::characterName}}. You never write any text the \
player sees: the reply is written by the character's Actor, which you run through the \
functions you are given.

How to run the reply:
- Call exactly one function at a time, then read its result before choosing the next one. \
Do not follow a fixed sequence; decide from what the result says.
- Call `actor` to write the next part of the reply. Use responseMode "complete" for a full \
part, or "visual_beat" for one short moment that is worth a picture (it is illustrated \
automatically). Most replies need one or two actor calls.
- If `generate_image` is offered and the player asked to see something, or a moment clearly \
deserves a picture, call it after the actor step that wrote that moment. Each part gets at \
most one picture.
- If `schedule_dio` is offered and the player gave a lasting instruction about how the \
character should behave from now on, call it once.
- Each result tells you how many output tokens and steps are left. When the reply is \
complete, or little budget is left, call `over`. Never call `over` before at least one \
`actor` call.
- If an actor step failed, decide from the result: try one more actor step, or call `over` \
to keep what was already written.
"""

DEFAULT_IMAGE_PROMPT_PRODUCER_PROMPT = """\
You write the description of one picture for a roleplay reply. You are given the player's \
request, the part of the reply to illustrate, the picture's number, the characters' \
permanent appearance and their current visual state. What the player asked to see comes \
first; otherwise pick the moment the part shows most clearly.

Answer with exactly one block and nothing else:
<image_prompt camera="close-up" aspect="3:4">one paragraph: who is in the picture and \
how they look (face, hair, build, clothing, injuries), what they are doing, the place, the \
light and the mood</image_prompt>

camera is one of: extreme-close-up, close-up, medium, full-body, wide, over-the-shoulder, \
low-angle, high-angle, overhead. aspect is one of: 1:1, 3:4, 4:3, 2:3, 3:2, 16:9, 9:16. \
Keep faces, clothing and places consistent with the visual state you are given.
"""

_CALL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def controller_system(prompt: str, skills: Iterable[Skill]) -> str:
    """The controller's system message: its prompt, then its skills (name: prompt)."""
    lines = [f"- {s.name}" + (f": {s.prompt}" if s.prompt else "") for s in skills]
    if not lines:
        return prompt
    return prompt.rstrip() + "\n\nSkills you may use:\n" + "\n".join(lines)


def opening_messages(system: str, player_input: str) -> list[dict[str, Any]]:
    """The first two messages: the system prompt, the player's input."""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": clip(player_input, MAX_PLAYER_INPUT_CHARS)},
    ]


def call_id(raw: object, step: int) -> str:
    """The id of a step's tool call: the controller's own when it is a plain id, else
    ``front_<step>`` (the tool message must repeat it exactly)."""
    if isinstance(raw, str) and _CALL_ID.match(raw):
        return raw
    return f"front_{step}"


def step_messages(
    call: str, tool: str, arguments: dict[str, Any], receipt: dict[str, Any]
) -> list[dict[str, Any]]:
    """One executed step as the controller sees it next: its call, then the receipt."""
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call,
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps(arguments)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call, "content": json.dumps(receipt, ensure_ascii=False)},
    ]
