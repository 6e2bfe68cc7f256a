"""``preActorDirector.skills``: the skills a controller may use, each
``{name, afterActorTools?, prompt?}`` (seed 002 lines 484–488; issue: objects).

Why objects: the seed's dispatch found its image wiring inside the skill presets
(``afterActorTools: ["generate_image"]``); here a skill says so itself, and
``generate_image`` is offered only when one does (``menu``). The older list of strings stays
readable: a string is ``{name}``. A skill's ``prompt`` is shown to the controller beside its
name (``prompt.controller_system``).

Limits: at most :data:`MAX_SKILLS` skills (the stored configs' limit), a name of at most
:data:`MAX_SKILL_NAME` characters on one line, a prompt of at most
:data:`MAX_SKILL_PROMPT`; ``afterActorTools`` only from :data:`AFTER_ACTOR_TOOLS`, each
once. Two skills with the same name (case and surrounding blanks aside) are an error, not a
silent merge: an operator who pasted an item twice is told which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import errors
from .errors import DirectorInvalid
from .fields import read_list, read_object, read_optional_text, read_text

GENERATE_IMAGE = "generate_image"
AFTER_ACTOR_TOOLS = (GENERATE_IMAGE,)
"""What a skill may ask for after an Actor step (seed line 486: ``generate_image``)."""
MAX_SKILLS = 50
MAX_SKILL_NAME = 200
MAX_SKILL_PROMPT = 8_000
_MAX_TOOL_ITEMS = 8  # a bound before the duplicate check, far above the known tools
_SKILL_FIELDS = ("name", "afterActorTools", "prompt")


@dataclass(frozen=True)
class Skill:
    """One skill: its ``name``, the tools it enables after the Actor, its prompt."""

    name: str
    after_actor_tools: tuple[str, ...] = ()
    prompt: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The object form (``{name, afterActorTools, prompt?}``), also for a legacy string."""
        data: dict[str, Any] = {"name": self.name, "afterActorTools": list(self.after_actor_tools)}
        if self.prompt is not None:
            data["prompt"] = self.prompt
        return data


def parse_skills(value: object, where: str = "preActorDirector.skills") -> tuple[Skill, ...]:
    """The skills of ``value`` (``null``: none), in order; :class:`DirectorInvalid` for the
    first bad item, named by its path (``preActorDirector.skills.3.name``)."""
    if value is None:
        return ()
    items = read_list(value, where, MAX_SKILLS)
    skills: list[Skill] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        field = f"{where}.{index}"
        skill = parse_skill(item, field)
        key = skill.name.casefold()
        if key in seen:
            raise DirectorInvalid(
                errors.DUPLICATE,
                f"{field}.name" if isinstance(item, dict) else field,
                f"repeats the skill of item {seen[key]} (each skill once)",
            )
        seen[key] = index
        skills.append(skill)
    return tuple(skills)


def parse_skill(item: object, field: str) -> Skill:
    """One item: a legacy string (a name) or ``{name, afterActorTools?, prompt?}``."""
    if isinstance(item, str):
        return Skill(name=read_text(item, field, MAX_SKILL_NAME, line=True))
    if not isinstance(item, dict):
        raise DirectorInvalid(
            errors.WRONG_TYPE,
            field,
            "must be a skill object {name, afterActorTools?, prompt?} or a name",
        )
    data = read_object(item, field, _SKILL_FIELDS)
    if "name" not in data:
        raise DirectorInvalid(errors.REQUIRED, f"{field}.name", "is required")
    name = read_text(data["name"], f"{field}.name", MAX_SKILL_NAME, line=True)
    tools = parse_after_actor_tools(data.get("afterActorTools"), f"{field}.afterActorTools")
    prompt = read_optional_text(data.get("prompt"), f"{field}.prompt", MAX_SKILL_PROMPT)
    return Skill(name=name, after_actor_tools=tools, prompt=prompt)


def parse_after_actor_tools(value: object, field: str) -> tuple[str, ...]:
    """``afterActorTools`` (``null`` or absent: none): known names, each once."""
    if value is None:
        return ()
    items = read_list(value, field, _MAX_TOOL_ITEMS)
    tools: list[str] = []
    for index, item in enumerate(items):
        where = f"{field}.{index}"
        if not isinstance(item, str):
            raise DirectorInvalid(errors.WRONG_TYPE, where, "must be a tool name (a string)")
        name = item.strip()
        if name not in AFTER_ACTOR_TOOLS:
            raise DirectorInvalid(
                errors.UNKNOWN_TOOL,
                where,
                f"is not a tool a skill can use after the Actor (known: "
                f"{', '.join(AFTER_ACTOR_TOOLS)})",
            )
        if name in tools:
            raise DirectorInvalid(errors.DUPLICATE, where, f"lists {name} twice")
        tools.append(name)
    return tuple(tools)
