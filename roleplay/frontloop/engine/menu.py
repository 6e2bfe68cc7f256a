"""Which functions the controller is offered, as OpenAI ``tools`` specs (seed 002 lines
476–481).

``actor {responseMode?: "complete" | "visual_beat"}`` and ``over {}`` are always offered;
``generate_image {}`` only when a skill lists it in ``afterActorTools`` *and* the scenario
has an image config; ``schedule_dio {}`` only when DIO is wired. Why both conditions for
images: the seed forbids showing a tool name the program cannot execute ("不能只向模型展示
工具名，却不给程序实际执行器", line 484). The order is fixed (actor, generate_image,
schedule_dio, over) so the same scenario sends the same request every step, which keeps
provider-side prompt caching working and the scripted tests exact.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from .config import DirectorConfig
from .skills import GENERATE_IMAGE

ACTOR = "actor"
OVER = "over"
SCHEDULE_DIO = "schedule_dio"
TOOL_NAMES = (ACTOR, GENERATE_IMAGE, SCHEDULE_DIO, OVER)
COMPLETE = "complete"
VISUAL_BEAT = "visual_beat"
RESPONSE_MODES = (COMPLETE, VISUAL_BEAT)

_NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_DESCRIPTIONS = {
    ACTOR: (
        "Run the character's Actor to write the next part of this reply; the player sees it "
        "as it streams. responseMode 'complete' (the default) writes a full part; "
        "'visual_beat' writes one visual moment, which is then illustrated automatically. "
        "The result tells you the segment index, its length and the output tokens left."
    ),
    GENERATE_IMAGE: (
        "Schedule a picture of the latest Actor segment. A segment gets at most one picture. "
        "The result says whether it was scheduled; the picture arrives later."
    ),
    SCHEDULE_DIO: (
        "Hand the player's lasting instruction (how the character should behave from now on) "
        "to the instruction service. Once per reply."
    ),
    OVER: "End this reply. Only after at least one actor step.",
}
_PARAMETERS: dict[str, dict[str, Any]] = {
    ACTOR: {
        "type": "object",
        "properties": {
            "responseMode": {
                "type": "string",
                "enum": list(RESPONSE_MODES),
                "description": "complete (default) or visual_beat",
            }
        },
        "additionalProperties": False,
    },
    GENERATE_IMAGE: _NO_ARGUMENTS,
    SCHEDULE_DIO: _NO_ARGUMENTS,
    OVER: _NO_ARGUMENTS,
}


@dataclass(frozen=True)
class Menu:
    """The tools offered this turn, by name, in :data:`TOOL_NAMES` order."""

    names: tuple[str, ...]

    def offers(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names

    @property
    def dio(self) -> bool:
        return SCHEDULE_DIO in self.names

    def specs(self) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` list (fresh copies: a caller may change them freely)."""
        return [tool_spec(name) for name in self.names]


def tool_spec(name: str) -> dict[str, Any]:
    """The OpenAI function spec of one tool of :data:`TOOL_NAMES`."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": _DESCRIPTIONS[name],
            "parameters": copy.deepcopy(_PARAMETERS[name]),
        },
    }


def menu_for(config: DirectorConfig, *, image_config: bool, dio: bool) -> Menu:
    """The menu of a scenario: ``image_config`` whether it names an image config, ``dio``
    whether the DIO service is wired."""
    offered = {ACTOR, OVER}
    if image_config and config.wants_images:
        offered.add(GENERATE_IMAGE)
    if dio:
        offered.add(SCHEDULE_DIO)
    return Menu(names=tuple(name for name in TOOL_NAMES if name in offered))
